//! Like `load`, but first rewrites every checksum to match, so that mutations get past the
//! CRCs and reach the JSON manifest, the section bookkeeping and `Executable::check`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use poplar::Executable;

/// Recomputes the manifest and section CRCs in place, following the lengths as far as they go.
fn fix_crcs(d: &mut [u8]) {
    let u64_at = |d: &[u8], i: usize| d.get(i..i + 8).map(|b| u64::from_le_bytes(b.try_into().unwrap()));
    let Some(mlen) = u64_at(d, 12) else { return };
    let Some(mend) = 24usize.checked_add(mlen as usize).filter(|&e| e <= d.len()) else { return };
    let crc = crc32fast::hash(&d[24..mend]);
    d[20..24].copy_from_slice(&crc.to_le_bytes());
    let Some(count) = d.get(mend..mend + 4).map(|b| u32::from_le_bytes(b.try_into().unwrap())) else { return };
    let mut pos = mend + 4;
    for _ in 0..count.min(16) {
        let Some(len) = u64_at(d, pos + 4) else { return };
        let start = pos + 16;
        let Some(end) = start.checked_add(len as usize).filter(|&e| e <= d.len()) else { return };
        let crc = crc32fast::hash(&d[start..end]);
        d[pos + 12..pos + 16].copy_from_slice(&crc.to_le_bytes());
        pos = end;
    }
}

fuzz_target!(|data: &[u8]| {
    codelets::link();
    let mut d = data.to_vec();
    fix_crcs(&mut d);
    if let Ok(exe) = Executable::from_bytes(&d) {
        exe.check().expect("a loaded executable passes check()");
        let bytes = exe.to_bytes();
        let again = Executable::from_bytes(&bytes).expect("a saved executable loads");
        assert_eq!(again.to_bytes(), bytes, "save/load is stable");
    }
});
