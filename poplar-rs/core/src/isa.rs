//! The host's vector instruction-set level, and codelet kernels compiled for each.
//!
//! A kernel written once with [`isa_dispatch!`](crate::isa_dispatch!) is compiled three times
//! on x86-64: for the baseline (SSE2, 4 `f32` lanes), for AVX2 (8 lanes) and for AVX-512 (16
//! lanes), with `#[target_feature]`. The process picks one level once — the best the host
//! supports, or the one `POPLAR_ISA` or [`set_active`] asks for — and every dispatching kernel
//! calls its version for that level: a thread-local and a relaxed atomic load and a branch per
//! call, nothing per element. An engine's own level (`EngineOptions::isa`) holds on its
//! threads while it runs ([`scoped`]), so engines of different levels share a process.
//!
//! **The same bits on every level.** Rust never contracts `a * b + c` into a fused
//! multiply-add and never reassociates floating-point arithmetic, whatever the target
//! features: a wider level only runs the same IEEE operations on more lanes at once. A kernel
//! keeps that promise as long as it calls no libm function (whose implementation glibc picks
//! by CPU) and no `mul_add`; the tests of every converted kernel compare the levels bit for
//! bit on one host (`POPLAR_ISA=baseline|avx2|avx512`).
//! One thing the language leaves open: the sign and payload of a NaN computed from NaN
//! operands (the compiler may swap the operands of `+` and `*`, and x86 returns the first
//! operand's NaN). A kernel whose outputs can be NaN stores them through
//! [`fp::canonical_nan`](crate::fp::canonical_nan), as the standard binary codelets, poplin's
//! matmul, popsparse's passes and the collectives' reductions do; [`EDGE_VALUES`] holds NaN of
//! both signs so that the level tests catch a kernel that does not. (The cardiac and hdiff
//! kernels do not: there a NaN only comes from a diverged run, and only its sign may differ.)
//!
//! On other architectures there is one level, [`IsaLevel::Baseline`] (on aarch64 that is
//! NEON, always present).

use std::cell::Cell;
use std::sync::atomic::{AtomicU8, Ordering};

/// An instruction-set level a kernel can be compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IsaLevel {
    /// The architecture's baseline (x86-64: SSE2; aarch64: NEON).
    Baseline,
    /// x86-64 with AVX2 (no FMA: the kernels never fuse).
    Avx2,
    /// x86-64 with AVX-512 F, VL, BW and DQ.
    Avx512,
}

impl IsaLevel {
    /// Every level, lowest first.
    pub const ALL: [IsaLevel; 3] = [IsaLevel::Baseline, IsaLevel::Avx2, IsaLevel::Avx512];

    /// The name `POPLAR_ISA` takes and reports print: `baseline`, `avx2`, `avx512`.
    pub fn name(self) -> &'static str {
        match self {
            IsaLevel::Baseline => "baseline",
            IsaLevel::Avx2 => "avx2",
            IsaLevel::Avx512 => "avx512",
        }
    }

    /// `f32` lanes of one vector register at this level (4 for the baseline).
    pub fn f32_lanes(self) -> usize {
        match self {
            IsaLevel::Baseline => 4,
            IsaLevel::Avx2 => 8,
            IsaLevel::Avx512 => 16,
        }
    }

    /// Whether this host can run code compiled for the level.
    pub fn is_supported(self) -> bool {
        match self {
            IsaLevel::Baseline => true,
            #[cfg(target_arch = "x86_64")]
            IsaLevel::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            IsaLevel::Avx512 => {
                std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512vl")
                    && std::arch::is_x86_feature_detected!("avx512bw")
                    && std::arch::is_x86_feature_detected!("avx512dq")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The best level this host supports.
    pub(crate) fn detect() -> IsaLevel {
        supported().last().copied().unwrap_or(IsaLevel::Baseline)
    }

    fn from_u8(x: u8) -> IsaLevel {
        match x {
            1 => IsaLevel::Avx2,
            2 => IsaLevel::Avx512,
            _ => IsaLevel::Baseline,
        }
    }
}

impl std::fmt::Display for IsaLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for IsaLevel {
    type Err = IsaError;

    fn from_str(s: &str) -> Result<IsaLevel, IsaError> {
        IsaLevel::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| IsaError::Unknown(s.to_string()))
    }
}

/// A level that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IsaError {
    #[error("unknown instruction-set level '{0}': give baseline, avx2 or avx512")]
    Unknown(String),
    #[error(
        "this host cannot run {level} code (it supports {})",
        supported_names()
    )]
    Unsupported { level: IsaLevel },
    #[error("{variable}: {source}")]
    Environment {
        variable: &'static str,
        source: Box<IsaError>,
    },
}

/// The environment variable that forces a level for the whole process.
pub const ENV: &str = "POPLAR_ISA";

/// The `f32` operands a test comparing levels feeds a kernel besides random ones: ±0, the
/// smallest and largest subnormals (and one between), the smallest normal, ±inf, NaN of both
/// signs, the extremes and ±1 — where a wider level's instructions could differ from the
/// baseline's (flushing, NaN propagation, signed zeros, overflow).
pub const EDGE_VALUES: [f32; 15] = [
    0.0,
    -0.0,
    1e-45,
    -1e-45,
    3e-39,
    f32::from_bits(0x007f_ffff),
    f32::MIN_POSITIVE,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::NAN,
    -f32::NAN,
    f32::MAX,
    f32::MIN,
    1.0,
    -1.0,
];

/// The levels this host supports, lowest first.
pub fn supported() -> Vec<IsaLevel> {
    IsaLevel::ALL
        .into_iter()
        .filter(|l| l.is_supported())
        .collect()
}

fn supported_names() -> String {
    supported()
        .iter()
        .map(|l| l.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Not chosen yet.
const UNSET: u8 = u8::MAX;
static ACTIVE: AtomicU8 = AtomicU8::new(UNSET);

/// The level `POPLAR_ISA` asks for, if set: an unknown or unsupported level is an error
/// naming the variable.
pub fn from_env() -> Result<Option<IsaLevel>, IsaError> {
    let Ok(value) = std::env::var(ENV) else {
        return Ok(None);
    };
    let wrap = |e| IsaError::Environment {
        variable: ENV,
        source: Box::new(e),
    };
    let level: IsaLevel = value.parse().map_err(wrap)?;
    if !level.is_supported() {
        return Err(wrap(IsaError::Unsupported { level }));
    }
    Ok(Some(level))
}

thread_local! {
    /// The level of this thread's [`scoped`] guard, if one is alive.
    static SCOPED: Cell<u8> = const { Cell::new(UNSET) };
}

/// The level the dispatching kernels run on this thread: the one of a live [`scoped`] guard
/// (an engine's level, on its threads while it runs), else the process's — chosen on first use
/// (`POPLAR_ISA` when it names a level this host supports, else the best supported) unless
/// [`set_active`] chose before. (A bad `POPLAR_ISA` is reported by [`from_env`], which the
/// engine calls when it is built; here it falls back to the best level.)
#[inline]
pub fn active() -> IsaLevel {
    match SCOPED.with(Cell::get) {
        UNSET => process_level(),
        x => IsaLevel::from_u8(x),
    }
}

/// The process's level (see [`active`]).
#[inline]
fn process_level() -> IsaLevel {
    match ACTIVE.load(Ordering::Relaxed) {
        UNSET => {
            let level = from_env().ok().flatten().unwrap_or_else(IsaLevel::detect);
            // Another thread may have chosen meanwhile: keep the first choice.
            let _ =
                ACTIVE.compare_exchange(UNSET, level as u8, Ordering::Relaxed, Ordering::Relaxed);
            IsaLevel::from_u8(ACTIVE.load(Ordering::Relaxed))
        }
        x => IsaLevel::from_u8(x),
    }
}

/// Makes every dispatching kernel of the process run `level` from now on; a level the host
/// cannot run is refused ([`IsaError::Unsupported`]) and changes nothing. Results are the
/// same bits at every level, so switching between runs changes only the speed.
pub fn set_active(level: IsaLevel) -> Result<(), IsaError> {
    if !level.is_supported() {
        return Err(IsaError::Unsupported { level });
    }
    ACTIVE.store(level as u8, Ordering::Relaxed);
    Ok(())
}

/// While it lives, the dispatching kernels on this thread run [`ScopedLevel`]'s level,
/// whatever the process's; dropping it restores the level this thread had before.
#[must_use = "the level holds only while the guard lives"]
#[derive(Debug)]
pub struct ScopedLevel {
    before: u8,
}

/// Makes the dispatching kernels on this thread run `level` until the guard drops (how an
/// engine's runs keep their own level); a level the host cannot run is refused
/// ([`IsaError::Unsupported`]).
pub fn scoped(level: IsaLevel) -> Result<ScopedLevel, IsaError> {
    if !level.is_supported() {
        return Err(IsaError::Unsupported { level });
    }
    let before = SCOPED.with(|c| c.replace(level as u8));
    Ok(ScopedLevel { before })
}

impl Drop for ScopedLevel {
    fn drop(&mut self) {
        SCOPED.with(|c| c.set(self.before));
    }
}

/// Declares a function compiled for every [`IsaLevel`] and called at the
/// [`active`](crate::isa::active) one.
///
/// ```
/// poplar_core::isa_dispatch! {
///     /// `out[i] = a[i] * b[i] + c`, at the host's vector width.
///     pub fn scale_add(out: &mut [f32], a: &[f32], b: &[f32], c: f32) {
///         for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
///             *o = x * y + c;
///         }
///     }
/// }
/// let mut out = [0.0f32; 3];
/// scale_add(&mut out, &[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], 0.5);
/// assert_eq!(out, [4.5, 10.5, 18.5]);
/// ```
///
/// The body is one `#[inline(always)]` function, inlined into a copy per level; what it
/// calls is compiled at the level only where it is inlined too (mark helpers
/// `#[inline(always)]` or `#[inline]`). Arguments are plain `name: Type` pairs; the only
/// generics are const ones (`fn step<const B: usize>(…)`).
#[macro_export]
macro_rules! isa_dispatch {
    (
        $(#[$meta:meta])*
        $vis:vis fn $name:ident
            $( < $( const $g:ident : $gt:ty ),* $(,)? > )?
            ( $( $arg:ident : $ty:ty ),* $(,)? ) $( -> $ret:ty )? $body:block
    ) => {
        $(#[$meta])*
        $vis fn $name $( < $( const $g: $gt ),* > )? ( $( $arg: $ty ),* ) $( -> $ret )? {
            #[inline(always)]
            #[allow(clippy::too_many_arguments)]
            fn body $( < $( const $g: $gt ),* > )? ( $( $arg: $ty ),* ) $( -> $ret )? $body

            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2")]
            #[allow(clippy::too_many_arguments)]
            fn avx2 $( < $( const $g: $gt ),* > )? ( $( $arg: $ty ),* ) $( -> $ret )? {
                body $( ::< $( $g ),* > )? ( $( $arg ),* )
            }

            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq")]
            #[allow(clippy::too_many_arguments)]
            fn avx512 $( < $( const $g: $gt ),* > )? ( $( $arg: $ty ),* ) $( -> $ret )? {
                body $( ::< $( $g ),* > )? ( $( $arg ),* )
            }

            match $crate::isa::active() {
                #[cfg(target_arch = "x86_64")]
                $crate::isa::IsaLevel::Avx512 => {
                    // SAFETY: `active` returns only levels `IsaLevel::is_supported` confirmed
                    // on this host (`set_active` and `scoped` refuse others; the default is
                    // `detect`), so
                    // the AVX-512 features this copy was compiled for are present.
                    unsafe { avx512 $( ::< $( $g ),* > )? ( $( $arg ),* ) }
                }
                #[cfg(target_arch = "x86_64")]
                $crate::isa::IsaLevel::Avx2 => {
                    // SAFETY: as above, AVX2 is present when `active` returns it.
                    unsafe { avx2 $( ::< $( $g ),* > )? ( $( $arg ),* ) }
                }
                _ => body $( ::< $( $g ),* > )? ( $( $arg ),* ),
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_bad_ones_are_named() {
        for l in IsaLevel::ALL {
            assert_eq!(l.name().parse::<IsaLevel>(), Ok(l));
        }
        assert_eq!("AVX2".parse::<IsaLevel>(), Ok(IsaLevel::Avx2));
        let e = "sse9".parse::<IsaLevel>().unwrap_err();
        assert!(e.to_string().contains("'sse9'"), "{e}");
    }

    #[test]
    fn the_baseline_is_always_supported_and_detect_is_supported() {
        assert!(supported().contains(&IsaLevel::Baseline));
        assert!(IsaLevel::detect().is_supported());
        assert_eq!(supported().last(), Some(&IsaLevel::detect()));
    }
}
