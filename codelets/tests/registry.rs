//! Every codelet in the documentation table of `codelets` is registered, and vice versa.

use poplar::codelet::{duplicates, lookup, registered, FieldDir};

#[test]
fn documented_names_are_registered() {
    codelets::link();
    let documented = codelets::documented_names();
    assert!(documented.len() > 60, "table parsed: {documented:?}");
    for name in &documented {
        assert!(
            lookup(name).is_some(),
            "'{name}' is documented but not registered"
        );
    }
    for d in registered() {
        if d.name.contains('<') {
            assert!(
                documented.contains(&d.name),
                "'{}' is registered but not in the table of lib.rs",
                d.name
            );
        }
    }
    assert!(duplicates().is_empty(), "{:?}", duplicates());
}

#[test]
fn field_conventions() {
    codelets::link();
    for name in codelets::documented_names() {
        let d = lookup(name).unwrap();
        let has = |f: &str| d.field_index(f).is_some();
        // Every codelet writes something, through `out` or the in-place `a`.
        let writes: Vec<_> = d.fields.iter().filter(|f| f.dir.writes()).collect();
        assert_eq!(writes.len(), 1, "{name}: {:?}", d.fields);
        assert!(has("out") || has("a"), "{name}");
        if name.contains("Multi") {
            assert!(d.multi_worker, "{name} should be multi-worker");
        } else {
            assert!(!d.multi_worker, "{name} should not be multi-worker");
        }
        if name.starts_with("Fill") || name.starts_with("ScaledAdd") {
            assert!(d.fields.iter().any(|f| f.dir == FieldDir::State), "{name}");
        }
    }
}
