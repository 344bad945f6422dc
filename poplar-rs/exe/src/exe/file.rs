//! Saving and loading executables.
//!
//! (About 650 lines. One concept, the file format: the writer and the reader of each section
//! sit together, so the layout above is defined in one place.)
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
//! block order; [`SECTION_TARGET`] holds `clock_hz`, `link_bytes_per_cycle` and
//! `gw_link_bytes_per_cycle` and (version 5) `streaming_memory_bytes_per_cycle` as f64 bits
//! (16 or 24 bytes, without the last ones, in older files). Each
//! appears exactly once. [`SECTION_APP`] (version 3) appears once per entry of
//! [`Executable::app_sections`]: name length u32, the UTF-8 name, then the data; names are
//! unique. Nothing may follow the last section.
//!
//! Loading checks magic, version, every length against the bytes actually left (so a bogus
//! length never causes a large allocation), every checksum, the JSON, the section lengths the
//! manifest implies, then that every codelet is registered with the same layout
//! ([`Executable::resolve_codelets`]; skipped by [`Executable::load_unlinked`], for tools that
//! only read an executable), then [`Executable::check`]. Any defect is an [`ExecutableError`];
//! nothing panics.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{
    CodeletId, CodeletRef, ComputePhase, ComputePhaseId, ExchangePhase, ExchangePhaseId,
    Executable, ExecutableError, FileError, FunctionId, HostTensor, RemoteBufferDesc,
    RemoteBufferId, RemoteCopy, RemoteCopyId, Step, StreamDesc, TileImage, FORMAT_VERSION,
};
use crate::entity::PrimaryMap;
use crate::target::Target;

/// First 8 bytes of every executable file.
pub const MAGIC: [u8; 8] = *b"POPLRSX\0";
/// Section kind: concatenated init block bytes.
pub const SECTION_INIT_DATA: u32 = 1;
/// Section kind: the target's f64 fields, bit-exact.
pub const SECTION_TARGET: u32 = 2;
/// Section kind: one named application section (see [`Executable::app_sections`]).
pub const SECTION_APP: u32 = 3;

const HEADER_BYTES: usize = 8 + 4 + 8 + 4;
const SECTION_HEADER_BYTES: usize = 4 + 8 + 4;

/// The manifest as written: borrows everything from the executable (no clone of bulk data).
#[derive(Serialize)]
struct ManifestRef<'a> {
    target: &'a Target,
    #[serde(skip_serializing_if = "Option::is_none")]
    replication: &'a Option<super::Replication>,
    codelets: &'a PrimaryMap<CodeletId, CodeletRef>,
    tiles: &'a [TileImage],
    computes: &'a PrimaryMap<ComputePhaseId, ComputePhase>,
    exchanges: &'a PrimaryMap<ExchangePhaseId, ExchangePhase>,
    programs: &'a [Step],
    functions: &'a PrimaryMap<FunctionId, Step>,
    host_tensors: &'a [HostTensor],
    streams: &'a [StreamDesc],
    #[serde(skip_serializing_if = "is_empty")]
    remote_buffers: &'a PrimaryMap<RemoteBufferId, RemoteBufferDesc>,
    #[serde(skip_serializing_if = "is_empty")]
    remote_copies: &'a PrimaryMap<RemoteCopyId, RemoteCopy>,
    variable_names: &'a [String],
}

fn is_empty<K: crate::entity::EntityId, V>(m: &&PrimaryMap<K, V>) -> bool {
    m.is_empty()
}

/// The manifest as read.
#[derive(Deserialize)]
struct Manifest {
    target: Target,
    #[serde(default)]
    replication: Option<super::Replication>,
    codelets: Vec<CodeletRef>,
    tiles: Vec<TileImage>,
    computes: Vec<ComputePhase>,
    exchanges: Vec<ExchangePhase>,
    programs: Vec<Step>,
    functions: Vec<Step>,
    host_tensors: Vec<HostTensor>,
    streams: Vec<StreamDesc>,
    #[serde(default)]
    remote_buffers: Vec<RemoteBufferDesc>,
    #[serde(default)]
    remote_copies: Vec<RemoteCopy>,
    variable_names: Vec<String>,
    /// The header's format version (not in the JSON).
    #[serde(skip)]
    version: u32,
}

fn section_name(kind: u32) -> String {
    match kind {
        SECTION_INIT_DATA => "init data section".into(),
        SECTION_TARGET => "target section".into(),
        SECTION_APP => "application section".into(),
        k => format!("section kind {k}"),
    }
}

/// Where a file image is read from: a byte slice or a file of known length. Every read is
/// checked against the bytes actually left, so a bogus length never causes a large allocation.
trait Source {
    fn offset(&self) -> u64;
    fn remaining(&self) -> u64;
    /// Fills `buf`; the caller has checked `buf.len() <= remaining()`.
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), FileError>;

    /// Reports truncation if fewer than `n` bytes are left.
    fn need(&self, n: u64, section: &str) -> Result<(), FileError> {
        if n > self.remaining() {
            return Err(FileError::Truncated {
                section: section.to_string(),
                offset: self.offset(),
                needed: n,
                available: self.remaining(),
            });
        }
        Ok(())
    }
    /// Takes `n` bytes (allocated only once `n` is known to be present).
    fn take(&mut self, n: u64, section: &str) -> Result<Vec<u8>, FileError> {
        self.need(n, section)?;
        let mut v = vec![0u8; n as usize];
        self.fill(&mut v)?;
        Ok(v)
    }
    fn u32(&mut self, section: &str) -> Result<u32, FileError> {
        self.need(4, section)?;
        let mut a = [0u8; 4];
        self.fill(&mut a)?;
        Ok(u32::from_le_bytes(a))
    }
    fn u64(&mut self, section: &str) -> Result<u64, FileError> {
        self.need(8, section)?;
        let mut a = [0u8; 8];
        self.fill(&mut a)?;
        Ok(u64::from_le_bytes(a))
    }
}

struct SliceSource<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Source for SliceSource<'_> {
    fn offset(&self) -> u64 {
        self.pos as u64
    }
    fn remaining(&self) -> u64 {
        (self.data.len() - self.pos) as u64
    }
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), FileError> {
        buf.copy_from_slice(&self.data[self.pos..self.pos + buf.len()]);
        self.pos += buf.len();
        Ok(())
    }
}

struct FileSource {
    file: std::io::BufReader<std::fs::File>,
    path: String,
    pos: u64,
    len: u64,
}

impl Source for FileSource {
    fn offset(&self) -> u64 {
        self.pos
    }
    fn remaining(&self) -> u64 {
        self.len - self.pos
    }
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), FileError> {
        // Large reads bypass the BufReader's buffer and land directly in `buf`.
        self.file.read_exact(buf).map_err(|e| FileError::Io {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        self.pos += buf.len() as u64;
        Ok(())
    }
}

fn checksum(section: &str, offset: u64, bytes: &[u8], stored: u32) -> Result<(), FileError> {
    let computed = crc32fast::hash(bytes);
    if computed != stored {
        return Err(FileError::Checksum {
            section: section.to_string(),
            offset,
            stored,
            computed,
        });
    }
    Ok(())
}

fn io_err(path: &Path, e: std::io::Error) -> FileError {
    FileError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

impl Executable {
    /// Writes the file image to `w` in one pass: small writes for headers, one `write_all` per
    /// init block straight from the executable (no staging copy of the bulk data), hashing the
    /// blocks as they are written; the init section's checksum is then patched into its
    /// header (hence `Seek`).
    pub fn write_to<W: Write + Seek>(&self, w: &mut W) -> std::io::Result<()> {
        let Executable {
            target,
            replication,
            codelets,
            tiles,
            computes,
            exchanges,
            programs,
            functions,
            host_tensors,
            streams,
            remote_buffers,
            remote_copies,
            variable_names,
            app_sections,
        } = self;
        let json_target = Target {
            clock_hz: 0.0,
            link_bytes_per_cycle: 0.0,
            gw_link_bytes_per_cycle: 0.0,
            streaming_memory_bytes_per_cycle: 0.0,
            ..target.clone()
        };
        let manifest = ManifestRef {
            target: &json_target,
            replication,
            codelets,
            tiles,
            computes,
            exchanges,
            programs,
            functions,
            host_tensors,
            streams,
            remote_buffers,
            remote_copies,
            variable_names,
        };
        let json = serde_json::to_vec(&manifest).map_err(std::io::Error::other)?;
        let mut head = Vec::with_capacity(HEADER_BYTES);
        head.extend_from_slice(&MAGIC);
        head.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        head.extend_from_slice(&(json.len() as u64).to_le_bytes());
        head.extend_from_slice(&crc32fast::hash(&json).to_le_bytes());
        w.write_all(&head)?;
        w.write_all(&json)?;
        drop(json);
        let count = u32::try_from(2 + app_sections.len()).map_err(std::io::Error::other)?;
        w.write_all(&count.to_le_bytes())?;

        // Target section.
        let mut tbytes = [0u8; 32];
        tbytes[..8].copy_from_slice(&target.clock_hz.to_bits().to_le_bytes());
        tbytes[8..16].copy_from_slice(&target.link_bytes_per_cycle.to_bits().to_le_bytes());
        tbytes[16..24].copy_from_slice(&target.gw_link_bytes_per_cycle.to_bits().to_le_bytes());
        tbytes[24..].copy_from_slice(
            &target
                .streaming_memory_bytes_per_cycle
                .to_bits()
                .to_le_bytes(),
        );
        w.write_all(&section_header(
            SECTION_TARGET,
            32,
            crc32fast::hash(&tbytes),
        ))?;
        w.write_all(&tbytes)?;

        // Init data section.
        let blocks = || tiles.iter().flat_map(|t| &t.init);
        let len: u64 = blocks().map(|b| b.data.len() as u64).sum();
        let header_at = w.stream_position()?;
        w.write_all(&section_header(SECTION_INIT_DATA, len, 0))?;
        let mut hasher = crc32fast::Hasher::new();
        for b in blocks() {
            hasher.update(&b.data);
            w.write_all(&b.data)?;
        }
        let end = w.stream_position()?;
        w.seek(SeekFrom::Start(header_at + 12))?;
        w.write_all(&hasher.finalize().to_le_bytes())?;
        w.seek(SeekFrom::Start(end))?;

        // Application sections, in name order.
        for (name, data) in app_sections {
            let nlen = u32::try_from(name.len()).map_err(std::io::Error::other)?;
            let mut hasher = crc32fast::Hasher::new();
            hasher.update(&nlen.to_le_bytes());
            hasher.update(name.as_bytes());
            hasher.update(data);
            let len = 4 + name.len() as u64 + data.len() as u64;
            w.write_all(&section_header(SECTION_APP, len, hasher.finalize()))?;
            w.write_all(&nlen.to_le_bytes())?;
            w.write_all(name.as_bytes())?;
            w.write_all(data)?;
        }
        Ok(())
    }

    /// A checksum of the file image, computed while
    /// serializing into a hasher, without holding the image: equal executables give equal
    /// checksums on every host (ranks of an MPI job compare theirs).
    ///
    /// The value is `length << 32 | crc`, with the CRC-32 of the bytes `write_to` writes, with
    /// the init section's checksum field as zero (it is patched in afterwards, and follows
    /// from the section's bytes).
    pub fn checksum(&self) -> u64 {
        struct Sink {
            hasher: crc32fast::Hasher,
            pos: u64,
            written: u64,
        }
        impl Write for Sink {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                // A write behind the end is the patch of a section's CRC: not hashed, since it
                // follows from the bytes already hashed, and a CRC followed by its own message's
                // CRC would cancel that message out of the sum.
                if self.pos >= self.written {
                    self.hasher.update(buf);
                    self.written += buf.len() as u64;
                }
                self.pos += buf.len() as u64;
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        impl Seek for Sink {
            fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
                if let SeekFrom::Start(p) = to {
                    self.pos = p;
                }
                Ok(self.pos)
            }
        }
        let mut sink = Sink {
            hasher: crc32fast::Hasher::new(),
            pos: 0,
            written: 0,
        };
        // Hashing cannot fail, nor can serializing these plain types to JSON.
        self.write_to(&mut sink)
            .expect("serializing an executable into a hasher");
        (sink.written << 32) | u64::from(sink.hasher.finalize())
    }

    /// The file image as bytes (see the module docs).
    pub fn to_bytes(&self) -> Vec<u8> {
        let init: usize = self
            .tiles
            .iter()
            .flat_map(|t| &t.init)
            .map(|b| b.data.len())
            .sum();
        let mut out = std::io::Cursor::new(Vec::with_capacity(init + 4096));
        // Writing into a Vec cannot fail, nor can serializing these plain types to JSON.
        self.write_to(&mut out)
            .expect("serializing an executable into memory");
        out.into_inner()
    }

    /// Parses and verifies an executable file image (see the module docs for what is checked).
    pub fn from_bytes(data: &[u8]) -> Result<Executable, ExecutableError> {
        let exe = parse(&mut SliceSource { data, pos: 0 })?;
        exe.resolve_codelets()?;
        exe.check()?;
        Ok(exe)
    }

    /// Writes the executable to `path`, atomically: into a temporary file beside it
    /// (`.<name>.<pid>.tmp`), flushed to the disk (`fsync`), then renamed over `path`, so a
    /// failed or interrupted save never leaves a truncated file and never destroys the file
    /// that was there before; a failed save removes its temporary file.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), FileError> {
        let path = path.as_ref();
        crate::atomic::save(path, |w| self.write_to(w), io_err)
    }

    /// Reads and verifies an executable written by [`Executable::save`]. Init blocks are read
    /// straight into their own buffers (no staging copy of the whole file).
    pub fn load(path: impl AsRef<Path>) -> Result<Executable, ExecutableError> {
        let exe = Executable::load_unlinked(path)?;
        exe.resolve_codelets()?;
        Ok(exe)
    }

    /// [`Executable::load`] without requiring this binary to link the executable's codelets:
    /// everything else is verified ([`Executable::check`] uses the field layouts the file
    /// records). For tools that only read an executable, such as memory and cycle reports of an
    /// application's executable; running it still needs the codelets, which
    /// `Engine::new` checks before anything runs.
    pub fn load_unlinked(path: impl AsRef<Path>) -> Result<Executable, ExecutableError> {
        let path = path.as_ref();
        // Checked before opening: opening a FIFO for reading blocks until a writer comes.
        let file = crate::files::open_regular(path).map_err(|e| match e {
            crate::files::InputError::NotRegular { kind, .. } => FileError::NotAFile {
                path: path.display().to_string(),
                kind: kind.into(),
            },
            crate::files::InputError::Io { source, .. } => io_err(path, source),
        })?;
        let len = file.metadata().map_err(|e| io_err(path, e))?.len();
        let mut src = FileSource {
            file: std::io::BufReader::with_capacity(1 << 16, file),
            path: path.display().to_string(),
            pos: 0,
            len,
        };
        let exe = parse(&mut src)?;
        exe.check()?;
        Ok(exe)
    }
}

fn section_header(kind: u32, len: u64, crc: u32) -> [u8; SECTION_HEADER_BYTES] {
    let mut h = [0u8; SECTION_HEADER_BYTES];
    h[..4].copy_from_slice(&kind.to_le_bytes());
    h[4..12].copy_from_slice(&len.to_le_bytes());
    h[12..].copy_from_slice(&crc.to_le_bytes());
    h
}

/// Parses a file image: header and manifest, then the sections, then the executable they make.
fn parse(r: &mut impl Source) -> Result<Executable, FileError> {
    let Manifest {
        mut target,
        replication,
        codelets,
        mut tiles,
        computes,
        exchanges,
        programs,
        functions,
        host_tensors,
        streams,
        remote_buffers,
        remote_copies,
        variable_names,
        version,
    } = read_manifest(r)?;
    let app_sections = read_sections(r, version, &mut target, &mut tiles)?;
    Ok(Executable {
        target,
        replication,
        codelets: codelets.into(),
        tiles,
        computes: computes.into(),
        exchanges: exchanges.into(),
        programs,
        functions: functions.into(),
        host_tensors,
        streams,
        remote_buffers: remote_buffers.into(),
        remote_copies: remote_copies.into(),
        variable_names,
        app_sections,
    })
}

/// Reads the header (magic, a supported version) and the manifest it announces, checksummed.
fn read_manifest(r: &mut impl Source) -> Result<Manifest, FileError> {
    if r.remaining() == 0 {
        return Err(FileError::Empty);
    }
    if r.take(8, "header")? != MAGIC {
        return Err(FileError::BadMagic);
    }
    let version = r.u32("header")?;
    // Version 4 only added fields that default to "not replicated": version 3 files load.
    if !(3..=FORMAT_VERSION).contains(&version) {
        return Err(FileError::UnsupportedVersion {
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    let mlen = r.u64("header")?;
    let mcrc = r.u32("header")?;
    let moff = r.offset();
    let mbytes = r.take(mlen, "manifest")?;
    checksum("manifest", moff, &mbytes, mcrc)?;
    let mut m: Manifest = serde_json::from_slice(&mbytes).map_err(|e| FileError::Manifest {
        offset: moff,
        message: e.to_string(),
    })?;
    m.version = version;
    Ok(m)
}

/// Reads the section table and every section, into `target` (its rates) and `tiles` (their
/// init data); returns the application sections. Requires the init data and target sections
/// once each and nothing after the last section.
fn read_sections(
    r: &mut impl Source,
    version: u32,
    target: &mut Target,
    tiles: &mut [TileImage],
) -> Result<std::collections::BTreeMap<String, Vec<u8>>, FileError> {
    let count = r.u32("section table")?;
    let mut have_init = false;
    let mut have_target = false;
    let mut app_sections = std::collections::BTreeMap::new();
    for _ in 0..count {
        let soff = r.offset();
        let kind = r.u32("section table")?;
        let name = section_name(kind);
        let len = r.u64(&name)?;
        let crc = r.u32(&name)?;
        let boff = r.offset();
        r.need(len, &name)?;
        if kind == SECTION_APP {
            let bytes = r.take(len, &name)?;
            checksum(&name, boff, &bytes, crc)?;
            let (app_name, data) = split_app_section(&bytes, boff)?;
            if app_sections.contains_key(&app_name) {
                return Err(FileError::DuplicateSection {
                    section: format!("application section '{app_name}'"),
                    offset: soff,
                });
            }
            app_sections.insert(app_name, data);
            continue;
        }
        let seen = match kind {
            SECTION_INIT_DATA => &mut have_init,
            SECTION_TARGET => &mut have_target,
            _ => return Err(FileError::UnknownSection { kind, offset: soff }),
        };
        if std::mem::replace(seen, true) {
            return Err(FileError::DuplicateSection {
                section: name,
                offset: soff,
            });
        }
        let section = SectionAt {
            name,
            len,
            crc,
            offset: boff,
        };
        if kind == SECTION_TARGET {
            read_target_section(r, section, version, target)?;
        } else {
            read_init_data(r, section, tiles)?;
        }
    }
    if r.remaining() != 0 {
        return Err(FileError::TrailingBytes {
            offset: r.offset(),
            count: r.remaining(),
        });
    }
    for (have, kind) in [
        (have_init, SECTION_INIT_DATA),
        (have_target, SECTION_TARGET),
    ] {
        if !have {
            return Err(FileError::MissingSection {
                section: section_name(kind),
            });
        }
    }
    Ok(app_sections)
}

/// A section whose header has been read (its bytes are known to be present).
struct SectionAt {
    name: String,
    len: u64,
    crc: u32,
    /// Where its bytes start.
    offset: u64,
}

/// Reads the target section: the clock and link rates, which the manifest does not hold.
fn read_target_section(
    r: &mut impl Source,
    s: SectionAt,
    version: u32,
    target: &mut Target,
) -> Result<(), FileError> {
    let bytes = r.take(s.len, &s.name)?;
    checksum(&s.name, s.offset, &bytes, s.crc)?;
    // 16 bytes before the GW-Link rate existed, 24 before the Streaming Memory rate (missing
    // rates keep their defaults): 16 or 24 up to version 4, 32 since.
    let allowed: &[usize] = if version >= 5 { &[32] } else { &[16, 24] };
    if !allowed.contains(&bytes.len()) {
        return Err(FileError::SectionLength {
            section: s.name,
            offset: s.offset,
            expected: *allowed.last().expect("one length at least") as u64,
            found: bytes.len() as u64,
        });
    }
    let f64_at = |i: usize| {
        let mut a = [0u8; 8];
        a.copy_from_slice(&bytes[i..i + 8]);
        f64::from_bits(u64::from_le_bytes(a))
    };
    target.clock_hz = f64_at(0);
    target.link_bytes_per_cycle = f64_at(8);
    target.gw_link_bytes_per_cycle = if bytes.len() >= 24 {
        f64_at(16)
    } else {
        crate::target::GW_LINK_BYTES_PER_CYCLE
    };
    target.streaming_memory_bytes_per_cycle = if bytes.len() >= 32 {
        f64_at(24)
    } else {
        crate::target::STREAMING_MEMORY_BYTES_PER_CYCLE
    };
    Ok(())
}

/// Reads the init data section. The manifest says how long each block is; the section must
/// hold exactly their sum, read block by block into its own buffer.
fn read_init_data(
    r: &mut impl Source,
    s: SectionAt,
    tiles: &mut [TileImage],
) -> Result<(), FileError> {
    let expected: u64 = tiles
        .iter()
        .flat_map(|t| &t.init)
        .map(|b| u64::from(b.len))
        .sum();
    if expected != s.len {
        return Err(FileError::SectionLength {
            section: s.name,
            offset: s.offset,
            expected,
            found: s.len,
        });
    }
    let mut hasher = crc32fast::Hasher::new();
    for b in tiles.iter_mut().flat_map(|t| &mut t.init) {
        let mut data = vec![0u8; b.len as usize];
        r.fill(&mut data)?;
        hasher.update(&data);
        b.data = data.into();
    }
    let computed = hasher.finalize();
    if computed != s.crc {
        return Err(FileError::Checksum {
            section: s.name,
            offset: s.offset,
            stored: s.crc,
            computed,
        });
    }
    Ok(())
}

/// Splits an application section's payload into its name and data.
fn split_app_section(bytes: &[u8], offset: u64) -> Result<(String, Vec<u8>), FileError> {
    let bad = |message: String| FileError::Manifest { offset, message };
    let nlen = bytes
        .get(..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .ok_or_else(|| bad("application section shorter than its name length".into()))?;
    let name = bytes.get(4..4 + nlen).ok_or_else(|| {
        bad(format!(
            "application section name of {nlen} bytes runs past the section"
        ))
    })?;
    let name = String::from_utf8(name.to_vec())
        .map_err(|_| bad("application section name is not UTF-8".into()))?;
    Ok((name, bytes[4 + nlen..].to_vec()))
}
