//! The typed errors of executables: [`CheckError`] (an executable that is not consistent, or
//! whose codelets are not those registered), [`FileError`] (a file that cannot be read or
//! written as an executable), and [`ExecutableError`], either of them (loading checks too).

use crate::dtype::DType;
use crate::target::TileId;

/// Loading or saving an executable failed: the file, or the executable it holds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExecutableError {
    /// The file cannot be read or written as an executable.
    #[error(transparent)]
    File(#[from] FileError),
    /// The executable is not consistent, or its codelets are not those registered.
    #[error(transparent)]
    Check(#[from] CheckError),
}

impl ExecutableError {
    /// The file error, if this is one.
    pub fn file(&self) -> Option<&FileError> {
        match self {
            ExecutableError::File(e) => Some(e),
            ExecutableError::Check(_) => None,
        }
    }

    /// The consistency error, if this is one.
    pub fn check(&self) -> Option<&CheckError> {
        match self {
            ExecutableError::Check(e) => Some(e),
            ExecutableError::File(_) => None,
        }
    }
}

/// What [`Executable::check`](super::Executable::check) or
/// [`Executable::resolve_codelets`](super::Executable::resolve_codelets) finds wrong with an
/// executable. Each variant names the thing at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CheckError {
    // ---- target and tiles ----
    /// A field of the target is outside what the chip model can mean.
    #[error("invalid target: {0}")]
    BadTarget(#[from] crate::target::TargetError),
    /// A tile image holds more always-live bytes than it allocates.
    #[error("tile {tile}: always-live bytes {always_live} exceed its memory bytes {memory}")]
    AlwaysLiveOverMemory {
        tile: TileId,
        always_live: u32,
        memory: u32,
    },
    /// A stream moves more elements per copy than the whole target's memory could hold.
    #[error("stream '{name}': {len} elements per copy cannot fit in the target's memory")]
    StreamTooLong { name: String, len: usize },
    /// A remote buffer or a copy to or from one is malformed (the reason says what).
    #[error("{owner}: {reason}")]
    BadRemote { owner: String, reason: String },
    /// An `OverlapIo` step whose transfers are not all to I/O tiles, or whose compute touches
    /// an I/O tile.
    #[error("{owner}: overlapped I/O: {reason}")]
    BadOverlapIo { owner: String, reason: String },
    /// The number of tile images differs from the target's tiles.
    #[error("executable has {found} tile images but the target has {expected} tiles")]
    TileCount { expected: u64, found: usize },
    /// A tile number beyond the target.
    #[error("{what}: tile {tile} is out of range (target has {num_tiles} tiles)")]
    TileOutOfRange {
        what: String,
        tile: TileId,
        num_tiles: u32,
    },
    /// An init block lies outside its tile's memory.
    #[error("tile {tile}: init block {block} ({offset}+{len} bytes) exceeds the tile's {memory_bytes} bytes")]
    InitOutOfBounds {
        tile: TileId,
        block: usize,
        offset: u32,
        len: u32,
        memory_bytes: u32,
    },
    /// An init block's data length differs from its declared length.
    #[error("tile {tile}: init block {block} declares {len} bytes but holds {data_len}")]
    InitLength {
        tile: TileId,
        block: usize,
        len: u32,
        data_len: usize,
    },

    // ---- compute phases ----
    /// The tiles of a compute phase are not sorted or appear twice.
    #[error("compute phase {compute_phase}: tile {tile} is not in strictly increasing tile order (duplicate or unsorted)")]
    ComputeTileOrder { compute_phase: usize, tile: TileId },
    /// An on-tile copy reads or writes outside the tile's memory.
    #[error("compute phase {compute_phase}, tile {tile}: {which} copy {index} ({src}->{dst}, {bytes} bytes) exceeds the tile's {memory_bytes} bytes")]
    CopyOutOfBounds {
        compute_phase: usize,
        tile: TileId,
        which: &'static str,
        index: usize,
        src: u32,
        dst: u32,
        bytes: u32,
        memory_bytes: u32,
    },
    /// A vertex names a codelet index the executable does not have.
    #[error("compute phase {compute_phase}, tile {tile}, vertex {vertex}: codelet index {codelet} out of range ({count} codelets)")]
    NoSuchCodelet {
        compute_phase: usize,
        tile: TileId,
        vertex: u32,
        codelet: u32,
        count: usize,
    },
    /// A vertex binds a different number of fields than its codelet declares.
    #[error("compute phase {compute_phase}, tile {tile}, vertex {vertex} ({codelet}): {found} fields, codelet declares {expected}")]
    FieldCount {
        compute_phase: usize,
        tile: TileId,
        vertex: u32,
        codelet: String,
        expected: usize,
        found: usize,
    },
    /// A scalar field is bound to other than one element.
    #[error("compute phase {compute_phase}, tile {tile}, vertex {vertex}, field {field}: scalar field bound to {len} elements")]
    ScalarLen {
        compute_phase: usize,
        tile: TileId,
        vertex: u32,
        field: usize,
        len: u32,
    },
    /// A vector-list field indexes beyond its vertex's list table.
    #[error("compute phase {compute_phase}, tile {tile}, vertex {vertex}, field {field}: list entries {start}..{start}+{len} out of range ({lists} entries)")]
    ListOutOfRange {
        compute_phase: usize,
        tile: TileId,
        vertex: u32,
        field: usize,
        start: u32,
        len: u32,
        lists: usize,
    },
    /// A field lies outside its tile's memory.
    #[error("compute phase {compute_phase}, tile {tile}, vertex {vertex}, field {field}: bytes {offset}..{offset}+{bytes} exceed the tile's {memory_bytes} bytes")]
    FieldOutOfBounds {
        compute_phase: usize,
        tile: TileId,
        vertex: u32,
        field: usize,
        offset: u64,
        bytes: u64,
        memory_bytes: u32,
    },
    /// A field is not aligned to its element size.
    #[error("compute phase {compute_phase}, tile {tile}, vertex {vertex}, field {field}: offset {offset} is not aligned to {align}")]
    FieldMisaligned {
        compute_phase: usize,
        tile: TileId,
        vertex: u32,
        field: usize,
        offset: u64,
        align: usize,
    },
    /// A written field overlaps another field of the same vertex.
    #[error("compute phase {compute_phase}, tile {tile}, vertex {vertex}: written field {field} overlaps field {other}")]
    AliasedField {
        compute_phase: usize,
        tile: TileId,
        vertex: u32,
        field: usize,
        other: usize,
    },

    // ---- exchange phases ----
    /// The replication of the executable is inconsistent (factor, chips, replica maps,
    /// replica constants, or a cross-replica copy in an executable that is not replicated).
    #[error("invalid replication: {reason}")]
    BadReplication { reason: String },
    /// An exchange transfer reads or writes outside a tile's memory.
    #[error("exchange phase {exchange_phase}, transfer {transfer}: tile {tile} bytes {offset}..{offset}+{bytes} exceed the tile's {memory_bytes} bytes")]
    TransferOutOfBounds {
        exchange_phase: usize,
        transfer: usize,
        tile: TileId,
        offset: u32,
        bytes: u32,
        memory_bytes: u32,
    },
    /// Two destinations of an exchange phase overlap, or a destination overlaps a source.
    #[error("exchange phase {exchange_phase}, tile {tile}: a destination of transfer {transfer} overlaps {what} of transfer {other}")]
    ExchangeOverlap {
        exchange_phase: usize,
        tile: TileId,
        transfer: usize,
        other: usize,
        what: &'static str,
    },

    // ---- programs ----
    /// A step names a phase, function or stream the executable does not have.
    #[error("{owner}: {what} index {index} out of range ({count})")]
    StepIndex {
        owner: String,
        what: &'static str,
        index: u32,
        count: usize,
    },
    /// Functions call each other in a cycle.
    #[error("function {function} calls itself (directly or indirectly)")]
    RecursiveCall { function: u32 },
    /// A predicate or switch control is not one element of a usable type.
    #[error("{owner}: {what} at tile {tile} offset {offset} ({dtype}): {reason}")]
    BadScalar {
        owner: String,
        what: &'static str,
        tile: TileId,
        offset: u32,
        dtype: DType,
        reason: String,
    },
    /// A host tensor or stream run lies outside a tile's memory.
    #[error("{owner}: run {run} (tile {tile}, {offset}+{bytes} bytes): {reason}")]
    BadRun {
        owner: String,
        run: usize,
        tile: TileId,
        offset: u32,
        bytes: u32,
        reason: String,
    },
    /// The runs of a host tensor or stream do not add up to its size.
    #[error("{owner}: runs hold {found} bytes, expected {expected}")]
    RunTotal {
        owner: String,
        expected: u64,
        found: u64,
    },
    /// A stream step uses a stream in the direction it was not declared for.
    #[error("{owner}: stream {stream} ('{name}') has the wrong direction for this step")]
    StreamDirection {
        owner: String,
        stream: u32,
        name: String,
    },
    /// Two host tensors or two streams share a name.
    #[error("{kind} name '{name}' is used more than once")]
    DuplicateName { kind: &'static str, name: String },
    /// A size does not fit the executable's integer types.
    #[error("{what} '{name}': element count overflows")]
    SizeOverflow { what: &'static str, name: String },

    // ---- codelets against the registry ----
    /// A codelet the executable uses is not linked into this binary (see `Executable::load_unlinked`).
    #[error("codelet '{name}' is not registered (is the crate that defines it linked?)")]
    UnregisteredCodelet { name: String },
    /// A codelet is registered with another field signature than the executable was compiled against.
    #[error("codelet '{name}': executable expects signature '{expected}', registered codelet has '{registered}'")]
    CodeletSignature {
        name: String,
        expected: String,
        registered: String,
    },
    /// A codelet is registered with other field kinds or worker mode than the executable records.
    #[error("codelet '{name}': the executable's field kinds or multi_worker flag disagree with the registered codelet")]
    CodeletLayout { name: String },
}

/// What is wrong with an executable file. Each variant names the thing at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// Reading or writing the file failed.
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    /// The path is not a regular file (a directory, FIFO, device or socket): refused before
    /// anything is read from it, since reading a FIFO or a device may never end.
    #[error("{path}: not a regular file ({kind}); an executable is read from a regular file")]
    NotAFile { path: String, kind: String },
    /// The file holds no bytes at all.
    #[error("empty file: not an executable")]
    Empty,
    /// The file does not start with the executable magic bytes.
    #[error("not an executable file (bad magic)")]
    BadMagic,
    /// The file was written by another format version (recompile it).
    #[error("unsupported executable format version {found} (this build reads {supported})")]
    UnsupportedVersion { found: u32, supported: u32 },
    /// The file ends before a section or field it declares.
    #[error(
        "file truncated in {section} at offset {offset}: need {needed} bytes, {available} left"
    )]
    Truncated {
        section: String,
        offset: u64,
        needed: u64,
        available: u64,
    },
    /// A section's checksum does not match its bytes (a damaged file).
    #[error("checksum mismatch in {section} at offset {offset}: stored {stored:#010x}, computed {computed:#010x}")]
    Checksum {
        section: String,
        offset: u64,
        stored: u32,
        computed: u32,
    },
    /// The manifest (JSON) does not parse as an executable, or an application section is malformed.
    #[error("manifest at offset {offset}: {message}")]
    Manifest { offset: u64, message: String },
    /// A section of an unknown kind.
    #[error("unknown section kind {kind} at offset {offset}")]
    UnknownSection { kind: u32, offset: u64 },
    /// A section (or application section name) appears twice.
    #[error("section {section} at offset {offset} appears more than once")]
    DuplicateSection { section: String, offset: u64 },
    /// A required section is missing.
    #[error("section {section} is missing")]
    MissingSection { section: String },
    /// A section's length differs from what the manifest implies.
    #[error(
        "section {section} at offset {offset}: holds {found} bytes, manifest expects {expected}"
    )]
    SectionLength {
        section: String,
        offset: u64,
        expected: u64,
        found: u64,
    },
    /// Bytes follow the last section.
    #[error("{count} unexpected trailing bytes at offset {offset}")]
    TrailingBytes { offset: u64, count: u64 },
}
