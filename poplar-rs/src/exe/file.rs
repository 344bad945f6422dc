//! Saving and loading executables.
//!
//! File layout (all integers little-endian):
//!
//! ```text
//! magic            8 bytes   b"POPLRSX\0"
//! version          u32       exe::FORMAT_VERSION
//! manifest length  u64
//! manifest crc32   u32
//! manifest         JSON of the plain exe types (InitBlock::data skipped; the target's two
//!                  f64 fields are written as 0 and travel bit-exact in the target section)
//! section count    u32
//! per section:     kind u32, length u64, crc32 u32, then `length` raw bytes
//! ```
//!
//! Sections: [`SECTION_INIT_DATA`] holds every `InitBlock::data`, concatenated in tile order then
//! block order; [`SECTION_TARGET`] holds `clock_hz` and `link_bytes_per_cycle` as f64 bits. Each
//! appears exactly once; nothing may follow the last section.
//!
//! Loading checks magic, version, every length against the bytes actually left (so a bogus
//! length never causes a large allocation), every checksum, the JSON, the section lengths the
//! manifest implies, then that every codelet is registered with the same layout
//! ([`Executable::resolve_codelets`]), then [`Executable::check`]. Any defect is an
//! [`ExecutableError`]; nothing panics.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{
    CodeletRef, ComputePhase, ExchangePhase, Executable, ExecutableError, HostTensor, Step,
    StreamDesc, TileImage, FORMAT_VERSION,
};
use crate::target::Target;

/// First 8 bytes of every executable file.
pub const MAGIC: [u8; 8] = *b"POPLRSX\0";
/// Section kind: concatenated init block bytes.
pub const SECTION_INIT_DATA: u32 = 1;
/// Section kind: the target's f64 fields, bit-exact.
pub const SECTION_TARGET: u32 = 2;

const HEADER_BYTES: usize = 8 + 4 + 8 + 4;
const SECTION_HEADER_BYTES: usize = 4 + 8 + 4;

/// The manifest as written: borrows everything from the executable (no clone of bulk data).
#[derive(Serialize)]
struct ManifestRef<'a> {
    target: &'a Target,
    codelets: &'a [CodeletRef],
    tiles: &'a [TileImage],
    computes: &'a [ComputePhase],
    exchanges: &'a [ExchangePhase],
    programs: &'a [Step],
    functions: &'a [Step],
    host_tensors: &'a [HostTensor],
    streams: &'a [StreamDesc],
    variable_names: &'a [String],
}

/// The manifest as read.
#[derive(Deserialize)]
struct Manifest {
    target: Target,
    codelets: Vec<CodeletRef>,
    tiles: Vec<TileImage>,
    computes: Vec<ComputePhase>,
    exchanges: Vec<ExchangePhase>,
    programs: Vec<Step>,
    functions: Vec<Step>,
    host_tensors: Vec<HostTensor>,
    streams: Vec<StreamDesc>,
    variable_names: Vec<String>,
}

fn section_name(kind: u32) -> String {
    match kind {
        SECTION_INIT_DATA => "init data section".into(),
        SECTION_TARGET => "target section".into(),
        k => format!("section kind {k}"),
    }
}

/// A bounds-checked cursor over the file bytes.
struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn offset(&self) -> u64 {
        self.pos as u64
    }
    fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }
    /// Takes `n` bytes, or reports truncation without allocating anything.
    fn take(&mut self, n: u64, section: &str) -> Result<&'a [u8], ExecutableError> {
        if n > self.remaining() as u64 {
            return Err(ExecutableError::Truncated {
                section: section.to_string(),
                offset: self.offset(),
                needed: n,
                available: self.remaining() as u64,
            });
        }
        let s = &self.data[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(s)
    }
    fn u32(&mut self, section: &str) -> Result<u32, ExecutableError> {
        let b = self.take(4, section)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self, section: &str) -> Result<u64, ExecutableError> {
        let b = self.take(8, section)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
}

fn checksum(section: &str, offset: u64, bytes: &[u8], stored: u32) -> Result<(), ExecutableError> {
    let computed = crc32fast::hash(bytes);
    if computed != stored {
        return Err(ExecutableError::Checksum {
            section: section.to_string(),
            offset,
            stored,
            computed,
        });
    }
    Ok(())
}

impl Executable {
    /// Serializes the executable into the versioned container described in the module docs.
    pub fn to_bytes(&self) -> Vec<u8> {
        let Executable {
            target,
            codelets,
            tiles,
            computes,
            exchanges,
            programs,
            functions,
            host_tensors,
            streams,
            variable_names,
        } = self;
        let json_target = Target {
            clock_hz: 0.0,
            link_bytes_per_cycle: 0.0,
            ..target.clone()
        };
        let manifest = ManifestRef {
            target: &json_target,
            codelets,
            tiles,
            computes,
            exchanges,
            programs,
            functions,
            host_tensors,
            streams,
            variable_names,
        };
        // Serializing plain data with string keys into a Vec cannot fail.
        let json = serde_json::to_vec(&manifest).expect("manifest serialization");
        let init_bytes: usize = tiles
            .iter()
            .flat_map(|t| &t.init)
            .map(|b| b.data.len())
            .sum();

        let total = HEADER_BYTES + json.len() + 4 + 2 * SECTION_HEADER_BYTES + init_bytes + 16;
        let mut out = Vec::with_capacity(total);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&(json.len() as u64).to_le_bytes());
        out.extend_from_slice(&crc32fast::hash(&json).to_le_bytes());
        out.extend_from_slice(&json);
        drop(json);
        out.extend_from_slice(&2u32.to_le_bytes());

        // Target section.
        let mut tbytes = [0u8; 16];
        tbytes[..8].copy_from_slice(&target.clock_hz.to_bits().to_le_bytes());
        tbytes[8..].copy_from_slice(&target.link_bytes_per_cycle.to_bits().to_le_bytes());
        out.extend_from_slice(&SECTION_TARGET.to_le_bytes());
        out.extend_from_slice(&16u64.to_le_bytes());
        out.extend_from_slice(&crc32fast::hash(&tbytes).to_le_bytes());
        out.extend_from_slice(&tbytes);

        // Init data section: bulk copies, checksum computed over the same slices.
        out.extend_from_slice(&SECTION_INIT_DATA.to_le_bytes());
        out.extend_from_slice(&(init_bytes as u64).to_le_bytes());
        let crc_at = out.len();
        out.extend_from_slice(&[0u8; 4]);
        let mut hasher = crc32fast::Hasher::new();
        for b in tiles.iter().flat_map(|t| &t.init) {
            hasher.update(&b.data);
            out.extend_from_slice(&b.data);
        }
        out[crc_at..crc_at + 4].copy_from_slice(&hasher.finalize().to_le_bytes());
        debug_assert_eq!(out.len(), total);
        out
    }

    /// Parses and verifies an executable file image (see the module docs for what is checked).
    pub fn from_bytes(data: &[u8]) -> Result<Executable, ExecutableError> {
        let exe = Self::parse(data)?;
        exe.resolve_codelets()?;
        exe.check()?;
        Ok(exe)
    }

    fn parse(data: &[u8]) -> Result<Executable, ExecutableError> {
        let mut r = Reader { data, pos: 0 };
        if r.take(8, "header")? != MAGIC {
            return Err(ExecutableError::BadMagic);
        }
        let version = r.u32("header")?;
        if version != FORMAT_VERSION {
            return Err(ExecutableError::UnsupportedVersion {
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        let mlen = r.u64("header")?;
        let mcrc = r.u32("header")?;
        let moff = r.offset();
        let mbytes = r.take(mlen, "manifest")?;
        checksum("manifest", moff, mbytes, mcrc)?;
        let m: Manifest =
            serde_json::from_slice(mbytes).map_err(|e| ExecutableError::Manifest {
                offset: moff,
                message: e.to_string(),
            })?;

        let count = r.u32("section table")?;
        let mut init: Option<(u64, &[u8])> = None;
        let mut target_bits: Option<&[u8]> = None;
        for _ in 0..count {
            let soff = r.offset();
            let kind = r.u32("section table")?;
            let name = section_name(kind);
            let len = r.u64(&name)?;
            let crc = r.u32(&name)?;
            let boff = r.offset();
            let bytes = r.take(len, &name)?;
            checksum(&name, boff, bytes, crc)?;
            let slot = match kind {
                SECTION_INIT_DATA => {
                    if init.is_some() {
                        return Err(ExecutableError::DuplicateSection {
                            section: name,
                            offset: soff,
                        });
                    }
                    init = Some((boff, bytes));
                    continue;
                }
                SECTION_TARGET => &mut target_bits,
                _ => return Err(ExecutableError::UnknownSection { kind, offset: soff }),
            };
            if slot.is_some() {
                return Err(ExecutableError::DuplicateSection {
                    section: name,
                    offset: soff,
                });
            }
            *slot = Some(bytes);
        }
        if r.remaining() != 0 {
            return Err(ExecutableError::TrailingBytes {
                offset: r.offset(),
                count: r.remaining() as u64,
            });
        }
        let Some((init_off, init_bytes)) = init else {
            return Err(ExecutableError::MissingSection {
                section: section_name(SECTION_INIT_DATA),
            });
        };
        let Some(tbits) = target_bits else {
            return Err(ExecutableError::MissingSection {
                section: section_name(SECTION_TARGET),
            });
        };
        if tbits.len() != 16 {
            return Err(ExecutableError::SectionLength {
                section: section_name(SECTION_TARGET),
                offset: 0,
                expected: 16,
                found: tbits.len() as u64,
            });
        }

        let Manifest {
            mut target,
            codelets,
            mut tiles,
            computes,
            exchanges,
            programs,
            functions,
            host_tensors,
            streams,
            variable_names,
        } = m;
        let f64_at = |i: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&tbits[i..i + 8]);
            f64::from_bits(u64::from_le_bytes(a))
        };
        target.clock_hz = f64_at(0);
        target.link_bytes_per_cycle = f64_at(8);

        let expected: u64 = tiles
            .iter()
            .flat_map(|t| &t.init)
            .map(|b| u64::from(b.len))
            .sum();
        if expected != init_bytes.len() as u64 {
            return Err(ExecutableError::SectionLength {
                section: section_name(SECTION_INIT_DATA),
                offset: init_off,
                expected,
                found: init_bytes.len() as u64,
            });
        }
        let mut pos = 0usize;
        for b in tiles.iter_mut().flat_map(|t| &mut t.init) {
            let n = b.len as usize;
            b.data = init_bytes[pos..pos + n].to_vec();
            pos += n;
        }

        Ok(Executable {
            target,
            codelets,
            tiles,
            computes,
            exchanges,
            programs,
            functions,
            host_tensors,
            streams,
            variable_names,
        })
    }

    /// Writes the executable to `path` (one `write_all` of the whole image).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), ExecutableError> {
        let path = path.as_ref();
        std::fs::write(path, self.to_bytes()).map_err(|e| ExecutableError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })
    }

    /// Reads and verifies an executable written by [`Executable::save`].
    pub fn load(path: impl AsRef<Path>) -> Result<Executable, ExecutableError> {
        let path = path.as_ref();
        let data = std::fs::read(path).map_err(|e| ExecutableError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Executable::from_bytes(&data)
    }
}
