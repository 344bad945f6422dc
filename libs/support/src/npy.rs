//! Reading `.npy` files (numpy's array format) without trusting their header: the one reader
//! (and, [`write`](fn@write), the one writer)
//! of the applications (feature `npy`).
//!
//! A `.npy` file is a magic string, a version, a header length, a Python dict literal
//! (`{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }`) and the data. Everything
//! the header claims is checked against the file before anything is allocated or indexed:
//!
//! - the header length against the bytes that follow it, and against numpy's own bound
//!   (10,000 bytes, `numpy.lib.format`'s `max_header_size`), with its brackets nested at most
//!   [`MAX_NESTING`] deep (so that parsing it needs little stack);
//! - every dimension of `shape` fits in 64 bits, and their product times the item size does not
//!   overflow (checked multiplication: a shape whose product wraps, such as
//!   `(9223372036854775908, 2)`, is refused, not read as the 200 elements it wraps to);
//! - the data after the header is exactly the bytes the shape and dtype claim;
//! - `descr` is a plain numpy type string (`<f4`, `|u1`, …) of items of one byte or more; records,
//!   sub-arrays and pickled objects (`|O`) are refused.
//!
//! The header's syntax and type strings are parsed by `py_literal` and `npyz` (the crates
//! numpy-compatible readers use), the values read by `npyz` once the sizes are known to agree.
//! Every failure is an [`NpyError`] naming the file and the field at fault.

use std::io::Read;
use std::path::{Path, PathBuf};

/// numpy's bound on the header's length (`numpy.lib.format`, `max_header_size`): a longer
/// header is refused before it is read.
pub const MAX_HEADER_BYTES: usize = 10_000;

/// The deepest nesting of brackets a header may have (numpy's headers nest two deep).
pub const MAX_NESTING: usize = 16;

/// Why a `.npy` file cannot be read. Every case names the file; header faults name the field.
#[derive(Debug, thiserror::Error)]
pub enum NpyError {
    #[error("{path}: cannot read: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not a .npy file (it does not start with numpy's magic string \\x93NUMPY)")]
    Magic { path: PathBuf },
    #[error(
        "{path}: .npy format version {major}.{minor} is not one numpy writes (1.0, 2.0 or 3.0)"
    )]
    Version { path: PathBuf, major: u8, minor: u8 },
    #[error("{path}: the header length field says {claimed} bytes, but {available} follow it")]
    HeaderLength {
        path: PathBuf,
        claimed: u64,
        available: u64,
    },
    #[error("{path}: the header is {claimed} bytes, more than the {MAX_HEADER_BYTES} numpy reads")]
    HeaderTooLong { path: PathBuf, claimed: u64 },
    #[error("{path}: header field '{field}': {reason}")]
    Header {
        path: PathBuf,
        field: &'static str,
        reason: String,
    },
    #[error("{path}: header field 'shape' {shape:?} with {item_bytes}-byte items claims more than 2^64 bytes")]
    ShapeOverflow {
        path: PathBuf,
        shape: Vec<u64>,
        item_bytes: u64,
    },
    #[error("{path}: header field 'shape' {shape:?} of {descr} claims {claimed} data bytes, but the file holds {found} after the header")]
    DataLength {
        path: PathBuf,
        shape: Vec<u64>,
        descr: String,
        claimed: u64,
        found: u64,
    },
    #[error("{path}: holds {descr}, which cannot be read as {wanted}")]
    Type {
        path: PathBuf,
        descr: String,
        wanted: &'static str,
    },
}

/// A `.npy` file whose header agrees with its size: the header's fields, and the data.
#[derive(Debug, Clone)]
pub struct Npy {
    path: PathBuf,
    dtype: npyz::DType,
    shape: Vec<u64>,
    order: npyz::Order,
    len: u64,
    /// The whole file; the data starts at `data_start`.
    bytes: Vec<u8>,
    data_start: usize,
}

/// Writes `data` as a `.npy` file of `shape` in `order`, atomically (a temporary file beside
/// `path`, renamed once complete: the one writer of the applications' and tools' arrays).
pub fn write<T: npyz::AutoSerialize + Copy>(
    path: &Path,
    shape: &[u64],
    order: npyz::Order,
    data: &[T],
) -> Result<(), crate::output::OutputError> {
    use npyz::WriterBuilder;
    crate::output::write_atomic_with(path, |w| {
        let mut writer = npyz::WriteOptions::<T>::new()
            .default_dtype()
            .shape(shape)
            .order(order)
            .writer(w)
            .begin_nd()?;
        writer.extend(data.iter().copied())?;
        writer.finish()
    })
}

/// Opens and reads `path` (see the module's checks).
pub fn read(path: &Path) -> Result<Npy, NpyError> {
    let f = std::fs::File::open(path).map_err(|source| NpyError::Read {
        path: path.into(),
        source,
    })?;
    from_reader(path, f)
}

/// Reads a `.npy` file from `r` to its end; `path` names it in errors.
pub fn from_reader(path: &Path, mut r: impl Read) -> Result<Npy, NpyError> {
    let mut bytes = Vec::new();
    r.read_to_end(&mut bytes).map_err(|source| NpyError::Read {
        path: path.into(),
        source,
    })?;
    parse(path, bytes)
}

/// The `.npy` file held in `bytes`; `path` names it in errors.
// Long: one check per header field in the order the file's bytes come (magic, version, header
// length, dictionary, dtype, order, shape, data size), each refusing with its own field named;
// split by field it would pass the half-parsed state between a dozen functions.
pub fn parse(path: &Path, bytes: Vec<u8>) -> Result<Npy, NpyError> {
    let p = || path.to_path_buf();
    let header_err = |field: &'static str, reason: String| NpyError::Header {
        path: path.into(),
        field,
        reason,
    };
    if bytes.len() < 8 || &bytes[..6] != b"\x93NUMPY" {
        return Err(NpyError::Magic { path: p() });
    }
    let (major, minor) = (bytes[6], bytes[7]);
    let (len_bytes, utf8) = match (major, minor) {
        (1, 0) => (2, false),
        (2, 0) => (4, false),
        (3, 0) => (4, true),
        _ => {
            return Err(NpyError::Version {
                path: p(),
                major,
                minor,
            })
        }
    };
    let start = 8 + len_bytes;
    if bytes.len() < start {
        return Err(NpyError::HeaderLength {
            path: p(),
            claimed: len_bytes as u64,
            available: bytes.len() as u64 - 8,
        });
    }
    let mut len = [0u8; 4];
    len[..len_bytes].copy_from_slice(&bytes[8..start]);
    let header_len = u32::from_le_bytes(len) as u64;
    let available = (bytes.len() - start) as u64;
    if header_len > MAX_HEADER_BYTES as u64 {
        return Err(NpyError::HeaderTooLong {
            path: p(),
            claimed: header_len,
        });
    }
    if header_len > available {
        return Err(NpyError::HeaderLength {
            path: p(),
            claimed: header_len,
            available,
        });
    }
    let data_start = start + header_len as usize;
    let text = &bytes[start..data_start];
    let text = if utf8 {
        std::str::from_utf8(text).ok()
    } else {
        text.is_ascii()
            .then(|| std::str::from_utf8(text).ok())
            .flatten()
    }
    .ok_or_else(|| {
        let enc = if utf8 { "UTF-8" } else { "ASCII" };
        header_err("header", format!("not {enc} text"))
    })?;
    let text = text.strip_suffix('\n').unwrap_or(text);
    if nesting(text) > MAX_NESTING {
        return Err(header_err(
            "header",
            format!("brackets nested more than {MAX_NESTING} deep"),
        ));
    }
    let dict: py_literal::Value = text.parse().map_err(|e: py_literal::ParseError| {
        header_err("header", format!("not a Python literal: {e}"))
    })?;
    let Some(entries) = dict.as_dict() else {
        return Err(header_err("header", "not a Python dict".into()));
    };
    let get = |key: &'static str| {
        let mut found = entries
            .iter()
            .filter(|(k, _)| k.as_string().map(String::as_str) == Some(key));
        match (found.next(), found.next()) {
            (Some((_, v)), None) => Ok(v),
            (None, _) => Err(header_err(key, "missing".into())),
            (Some(_), Some(_)) => Err(header_err(key, "given twice".into())),
        }
    };
    let descr = get("descr")?;
    let order = match get("fortran_order")?.as_boolean() {
        Some(true) => npyz::Order::Fortran,
        Some(false) => npyz::Order::C,
        None => return Err(header_err("fortran_order", "not True or False".into())),
    };
    let shape = match get("shape")? {
        py_literal::Value::Tuple(dims) => dims
            .iter()
            .map(|d| {
                d.as_integer()
                    .and_then(|i| u64::try_from(i).ok())
                    .ok_or_else(|| {
                        header_err("shape", format!("{d} is not a size (0 to 2^64 - 1)"))
                    })
            })
            .collect::<Result<Vec<u64>, _>>()?,
        other => return Err(header_err("shape", format!("{other} is not a tuple"))),
    };
    let Some(descr) = descr.as_string() else {
        return Err(header_err(
            "descr",
            format!("{descr}: records and sub-arrays are not read, only plain types such as '<f4'"),
        ));
    };
    let ty: npyz::TypeStr = descr
        .parse()
        .map_err(|e: npyz::ParseTypeStrError| header_err("descr", format!("'{descr}': {e}")))?;
    let dtype = npyz::DType::Plain(ty);
    if dtype.uses_pickled_array() {
        return Err(header_err(
            "descr",
            format!("'{descr}': pickled Python objects are not read"),
        ));
    }
    let item_bytes = match dtype.num_bytes() {
        Some(n) if n > 0 => n as u64,
        _ => return Err(header_err("descr", format!("'{descr}': items of no bytes"))),
    };
    // Checked: a product that wraps is refused. Zero dimensions count as one, so that the
    // strides npyz derives from the shape (partial products, in either order) cannot wrap.
    let nonzero = shape
        .iter()
        .try_fold(item_bytes, |acc, &d| acc.checked_mul(d.max(1)));
    if nonzero.is_none() {
        return Err(NpyError::ShapeOverflow {
            path: p(),
            shape,
            item_bytes,
        });
    }
    let len: u64 = shape.iter().product();
    let claimed = len * item_bytes;
    let found = (bytes.len() - data_start) as u64;
    if claimed != found {
        return Err(NpyError::DataLength {
            path: p(),
            shape,
            descr: descr.clone(),
            claimed,
            found,
        });
    }
    Ok(Npy {
        path: p(),
        dtype,
        shape,
        order,
        len,
        bytes,
        data_start,
    })
}

/// How deep the brackets of `text` nest, outside string literals.
fn nesting(text: &str) -> usize {
    let (mut depth, mut max, mut quote, mut escaped) = (0usize, 0usize, None, false);
    for c in text.chars() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' => quote = Some(c),
                '(' | '[' | '{' => {
                    depth += 1;
                    max = max.max(depth);
                }
                ')' | ']' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
    }
    max
}

impl Npy {
    /// The file it was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The element type (always [`npyz::DType::Plain`]).
    pub fn dtype(&self) -> &npyz::DType {
        &self.dtype
    }

    /// The element type as numpy writes it (`<f4`).
    pub fn descr(&self) -> String {
        match &self.dtype {
            npyz::DType::Plain(t) => t.to_string(),
            other => other.descr(),
        }
    }

    /// The shape, as the header gives it.
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    /// C (row-major) or Fortran (column-major) order of the data.
    pub fn order(&self) -> npyz::Order {
        self.order
    }

    /// The number of elements: the product of the shape, which the file holds.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// No elements (a dimension is 0).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every element in the order of the file, as `T` (`wanted` names `T` in the error when
    /// the file's type cannot be read as it, e.g. `"f32"`).
    pub fn to_vec<T: npyz::Deserialize>(&self, wanted: &'static str) -> Result<Vec<T>, NpyError> {
        let type_err = || NpyError::Type {
            path: self.path.clone(),
            descr: self.descr(),
            wanted,
        };
        let header =
            npyz::NpyHeader::from_reader(&self.bytes[..self.data_start]).map_err(|_| type_err())?;
        let data = &self.bytes[self.data_start..];
        let reader = npyz::NpyFile::with_header(header, data)
            .data::<T>()
            .map_err(|_| type_err())?;
        let mut out = Vec::with_capacity(self.len as usize);
        for v in reader {
            out.push(v.map_err(|source| NpyError::Read {
                path: self.path.clone(),
                source,
            })?);
        }
        Ok(out)
    }
}

/// The fuzzing property of the reader (`poplar-rs/fuzz`'s target `npy`, and its stable replay
/// in this crate's tests): any `data` gives an error or a file whose shape and type account
/// for every byte after the header, and whose values read back as the type its header names,
/// as many as the shape claims. Panics when the property fails.
#[doc(hidden)]
pub fn check_property(data: &[u8]) {
    let Ok(npy) = parse(Path::new("fuzz.npy"), data.to_vec()) else {
        return;
    };
    let item = npy.dtype.num_bytes().expect("checked") as u64;
    assert_eq!(npy.len * item, (npy.bytes.len() - npy.data_start) as u64);
    assert_eq!(npy.len, npy.shape.iter().product::<u64>());
    let npyz::DType::Plain(t) = &npy.dtype else {
        panic!("a plain dtype was checked");
    };
    fn count<T: npyz::Deserialize>(npy: &Npy, must: bool) {
        match npy.to_vec::<T>("T") {
            Ok(v) => assert_eq!(v.len() as u64, npy.len, "{}", npy.descr()),
            Err(e) => assert!(!must, "{} does not read: {e}", npy.descr()),
        }
    }
    use npyz::TypeChar as C;
    match (t.type_char(), t.size_field()) {
        (C::Float, 4) => count::<f32>(&npy, true),
        (C::Float, 8) => count::<f64>(&npy, true),
        (C::Int, 4) => count::<i32>(&npy, true),
        (C::Int, 8) => count::<i64>(&npy, true),
        (C::Uint, 1) => count::<u8>(&npy, true),
        _ => {
            count::<f32>(&npy, false);
            count::<i64>(&npy, false);
            count::<u8>(&npy, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A version 1.0 file of `header` (padded as numpy pads it) and `data`.
    fn file(header: &str, data: &[u8]) -> Vec<u8> {
        let mut h = header.to_string();
        while !(10 + h.len() + 1).is_multiple_of(64) {
            h.push(' ');
        }
        h.push('\n');
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend_from_slice(&(h.len() as u16).to_le_bytes());
        b.extend_from_slice(h.as_bytes());
        b.extend_from_slice(data);
        b
    }

    fn f32s(n: usize) -> Vec<u8> {
        (0..n).flat_map(|i| (i as f32).to_le_bytes()).collect()
    }

    #[test]
    fn reads_what_npyz_writes() {
        let mut buf = Vec::new();
        {
            use npyz::WriterBuilder;
            let mut w = npyz::WriteOptions::<f32>::new()
                .default_dtype()
                .shape(&[2, 3])
                .order(npyz::Order::Fortran)
                .writer(&mut buf)
                .begin_nd()
                .unwrap();
            w.extend((0..6).map(|i| i as f32)).unwrap();
            w.finish().unwrap();
        }
        let npy = parse(Path::new("a.npy"), buf).unwrap();
        assert_eq!(npy.shape(), &[2, 3]);
        assert_eq!(npy.order(), npyz::Order::Fortran);
        assert_eq!(npy.descr(), "<f4");
        assert_eq!(npy.to_vec::<f32>("f32").unwrap(), [0., 1., 2., 3., 4., 5.]);
        let e = npy.to_vec::<i64>("i64").unwrap_err();
        assert_eq!(
            e.to_string(),
            "a.npy: holds <f4, which cannot be read as i64"
        );
    }

    /// The case: (9223372036854775908, 2) wraps to 200 elements; 200 f32 follow.
    #[test]
    fn a_shape_whose_product_wraps_is_refused() {
        for order in ["False", "True"] {
            let h = format!(
                "{{'descr': '<f4', 'fortran_order': {order}, 'shape': (9223372036854775908, 2), }}"
            );
            let e = parse(Path::new("x.npy"), file(&h, &f32s(200))).unwrap_err();
            assert!(matches!(e, NpyError::ShapeOverflow { .. }), "{e:?}");
            assert_eq!(
                e.to_string(),
                "x.npy: header field 'shape' [9223372036854775908, 2] with 4-byte items claims more than 2^64 bytes"
            );
        }
        // A zero dimension does not hide an overflow of the others' strides.
        let h = "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4294967296, 4294967296), }";
        let e = parse(Path::new("x.npy"), file(h, &[])).unwrap_err();
        assert!(matches!(e, NpyError::ShapeOverflow { .. }), "{e:?}");
    }

    #[test]
    fn the_data_must_be_what_the_shape_claims() {
        let h = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";
        assert_eq!(
            parse(Path::new("x.npy"), file(h, &f32s(12))).unwrap().len(),
            12
        );
        for n in [11, 13, 0] {
            let e = parse(Path::new("x.npy"), file(h, &f32s(n))).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("x.npy: header field 'shape' [3, 4] of <f4 claims 48 data bytes, but the file holds {} after the header", 4 * n)
            );
        }
    }

    #[test]
    fn header_faults_name_the_field() {
        let cases = [
            (
                "{'descr': '<f4', 'fortran_order': False}",
                "x.npy: header field 'shape': missing",
            ),
            (
                "{'descr': '<f4', 'fortran_order': 0, 'shape': ()}",
                "x.npy: header field 'fortran_order': not True or False",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",
                "x.npy: header field 'shape': -1 is not a size (0 to 2^64 - 1)",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (18446744073709551616,)}",
                "x.npy: header field 'shape': 18446744073709551616 is not a size (0 to 2^64 - 1)",
            ),
            (
                "{'descr': '|O', 'fortran_order': False, 'shape': (1,)}",
                "x.npy: header field 'descr': '|O': pickled Python objects are not read",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': [1]}",
                "x.npy: header field 'shape': [1] is not a tuple",
            ),
            ("[1, 2]", "x.npy: header field 'header': not a Python dict"),
            (
                "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}",
                "x.npy: header field 'descr': given twice",
            ),
        ];
        for (h, want) in cases {
            let e = parse(Path::new("x.npy"), file(h, &f32s(1))).unwrap_err();
            assert_eq!(e.to_string(), want, "{h}");
        }
        let deep = format!("{}{}", "(".repeat(4000), ")".repeat(4000));
        let e = parse(Path::new("x.npy"), file(&deep, &[])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.npy: header field 'header': brackets nested more than 16 deep"
        );
    }

    #[test]
    fn lengths_in_the_preamble_are_checked() {
        let e = parse(Path::new("x.npy"), b"\x93NUMPY\x01\x00\xff\x00{".to_vec()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.npy: the header length field says 255 bytes, but 1 follow it"
        );
        let e = parse(
            Path::new("x.npy"),
            b"\x93NUMPY\x02\x00\xff\xff\xff\xff".to_vec(),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.npy: the header is 4294967295 bytes, more than the 10000 numpy reads"
        );
        let e = parse(Path::new("x.npy"), b"\x93NUMPY\x02\x00\x01".to_vec()).unwrap_err();
        assert!(matches!(e, NpyError::HeaderLength { .. }), "{e:?}");
        let e = parse(Path::new("x.npy"), b"\x93NUMPY\x04\x00".to_vec()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.npy: .npy format version 4.0 is not one numpy writes (1.0, 2.0 or 3.0)"
        );
        let e = parse(Path::new("x.npy"), b"PK\x03\x04".to_vec()).unwrap_err();
        assert!(matches!(e, NpyError::Magic { .. }), "{e:?}");
    }
}
