//! The pieces of a VTK XML file that the apps' writers share (cardiac's `.vtu` meshes and
//! hdiff's `.vti` images): the XML declaration with the `VTKFile` element, and inline binary
//! data arrays — base64 of a `UInt64` little-endian byte count followed by the bytes, as
//! declared by `header_type="UInt64"`.
//!
//! The data set element (`UnstructuredGrid`, `ImageData`, …), its pieces and the
//! `DataArray` elements are each app's own, and so is their layout.

use std::io::Write;

use base64::Engine as _;

/// A binary data array that does not decode.
#[derive(Debug, thiserror::Error)]
pub enum VtkError {
    /// Not base64.
    #[error("binary data array: not base64 ({0})")]
    Base64(#[from] base64::DecodeError),
    /// Shorter than its size prefix, or than the size it gives.
    #[error(
        "binary data array: {found} bytes after the 8-byte size prefix, which gives {expected}"
    )]
    Length { expected: u64, found: usize },
}

/// Writes the XML declaration and the opening `VTKFile` element of a little-endian file with
/// 64-bit size prefixes, for a data set of type `data_set` (e.g. `UnstructuredGrid`), each on
/// its own line.
pub fn write_header(w: &mut impl Write, data_set: &str) -> std::io::Result<()> {
    writeln!(w, "<?xml version=\"1.0\"?>")?;
    writeln!(
        w,
        "<VTKFile type=\"{data_set}\" version=\"1.0\" byte_order=\"LittleEndian\" \
         header_type=\"UInt64\">"
    )
}

/// Writes the closing `VTKFile` element and its line end.
pub fn write_footer(w: &mut impl Write) -> std::io::Result<()> {
    writeln!(w, "</VTKFile>")
}

/// The text of an inline binary data array holding `bytes` (already little-endian): base64 of
/// the byte count as a little-endian `u64`, then the bytes, as one block.
pub fn encode_binary(bytes: &[u8]) -> String {
    let mut all = Vec::with_capacity(8 + bytes.len());
    all.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    all.extend_from_slice(bytes);
    base64::engine::general_purpose::STANDARD.encode(&all)
}

/// `f32` values as little-endian bytes (the body of a `Float32` array).
pub fn f32_le_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// The bytes of a binary data array written by [`encode_binary`] (one base64 block; surrounding
/// whitespace ignored): checks the size prefix against what follows.
pub fn decode_binary(text: &str) -> Result<Vec<u8>, VtkError> {
    let all = base64::engine::general_purpose::STANDARD.decode(text.trim())?;
    let expected = all
        .get(..8)
        .map(|h| u64::from_le_bytes(h.try_into().expect("8 bytes")))
        .ok_or(VtkError::Length {
            expected: 8,
            found: all.len(),
        })?;
    let found = all.len() - 8;
    if found as u64 != expected {
        return Err(VtkError::Length { expected, found });
    }
    Ok(all[8..].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_arrays_round_trip_with_their_size_prefix() {
        let values = [0.0f32, -1.5, f32::MIN_POSITIVE, f32::MAX, 1e-40];
        let body = f32_le_bytes(&values);
        let text = encode_binary(&body);
        let raw = base64::engine::general_purpose::STANDARD
            .decode(&text)
            .unwrap();
        assert_eq!(u64::from_le_bytes(raw[..8].try_into().unwrap()), 20);
        let back = decode_binary(&format!("  {text}\n")).unwrap();
        assert_eq!(back, body);
        let floats: Vec<u32> = back
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(
            floats,
            values.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        // An empty array is a bare prefix.
        assert_eq!(
            decode_binary(&encode_binary(&[])).unwrap(),
            Vec::<u8>::new()
        );
    }

    #[test]
    fn a_wrong_size_prefix_or_bad_text_is_refused() {
        let mut raw = 12u64.to_le_bytes().to_vec();
        raw.extend_from_slice(&[1, 2, 3, 4]);
        let text = base64::engine::general_purpose::STANDARD.encode(&raw);
        let e = decode_binary(&text).unwrap_err();
        assert!(e.to_string().contains("gives 12"), "{e}");
        assert!(matches!(decode_binary("AAA"), Err(VtkError::Base64(_))));
        assert!(matches!(
            decode_binary(""),
            Err(VtkError::Length { found: 0, .. })
        ));
    }

    #[test]
    fn the_header_and_footer_are_what_both_apps_wrote() {
        let mut w = Vec::new();
        write_header(&mut w, "ImageData").unwrap();
        write_footer(&mut w).unwrap();
        assert_eq!(
            String::from_utf8(w).unwrap(),
            "<?xml version=\"1.0\"?>\n<VTKFile type=\"ImageData\" version=\"1.0\" \
             byte_order=\"LittleEndian\" header_type=\"UInt64\">\n</VTKFile>\n"
        );
    }
}
