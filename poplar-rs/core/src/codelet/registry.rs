//! The process-wide table of registered codelets.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::field::{CycleCtx, FieldSpec, VertexError, VertexIo, Worker};

/// A registered codelet, as submitted by [`codelet!`](crate::codelet!).
pub struct CodeletDesc {
    /// Unique name graphs refer to, e.g. `"ScaledAdd<float>"`.
    pub name: &'static str,
    pub fields: &'static [FieldSpec],
    /// Run `compute` once per worker context.
    pub multi_worker: bool,
    pub compute: fn(&VertexIo<'_>, Worker) -> Result<(), VertexError>,
    pub cycles: fn(&CycleCtx<'_>) -> Option<u64>,
}

inventory::collect!(CodeletDesc);

impl CodeletDesc {
    /// Index of field `name`.
    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }

    /// A string that changes whenever the field layout changes; stored in executables so a
    /// loader can refuse a codelet whose fields no longer match.
    pub fn signature(&self) -> String {
        let mut s = String::new();
        for f in self.fields {
            s.push_str(&format!(
                "{}:{:?}:{:?}:{};",
                f.name, f.dir, f.shape, f.dtype
            ));
        }
        if self.multi_worker {
            s.push_str("multi_worker");
        }
        s
    }
}

impl std::fmt::Debug for CodeletDesc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodeletDesc")
            .field("name", &self.name)
            .field("fields", &self.fields)
            .finish()
    }
}

/// Registration problems found when building the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateCodelet(pub &'static str);

fn table() -> &'static (
    HashMap<&'static str, &'static CodeletDesc>,
    Vec<DuplicateCodelet>,
) {
    static TABLE: OnceLock<(
        HashMap<&'static str, &'static CodeletDesc>,
        Vec<DuplicateCodelet>,
    )> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut map = HashMap::new();
        let mut dups = Vec::new();
        for d in inventory::iter::<CodeletDesc> {
            if map.insert(d.name, d).is_some() {
                dups.push(DuplicateCodelet(d.name));
            }
        }
        (map, dups)
    })
}

/// Looks up a registered codelet by name.
pub fn lookup(name: &str) -> Option<&'static CodeletDesc> {
    table().0.get(name).copied()
}

/// All registered codelets, sorted by name.
pub fn registered() -> Vec<&'static CodeletDesc> {
    let mut v: Vec<_> = table().0.values().copied().collect();
    v.sort_by_key(|d| d.name);
    v
}

/// Names registered more than once (a linking mistake: two crates define the same codelet).
pub fn duplicates() -> &'static [DuplicateCodelet] {
    &table().1
}
