//! Floating point as the chip does it: subnormal flushing on the host threads that run codelets.
//!
//! The chip flushes subnormal f32 inputs and results to zero (the paper's §5 measured it); the
//! host's IEEE arithmetic keeps them, and so gives other bits exactly where users look
//! (underflowing gating variables, tiny gradients). When the target says so
//! ([`Target::flush_subnormals`](crate::target::Target::flush_subnormals), on for the GC200
//! presets), the engine puts every thread that runs codelets into the host CPU's flush modes for
//! the duration of a run, so that every codelet, standard or user-written, computes with the
//! chip's rule without doing anything itself:
//!
//! - **x86-64**: MXCSR's FTZ (bit 15: subnormal results become zero) and DAZ (bit 6: subnormal
//!   inputs read as zero), which govern the SSE/AVX arithmetic Rust uses for `f32` and `f64`;
//! - **aarch64**: FPCR.FZ (bit 24), which flushes both inputs and results;
//! - **elsewhere, and under Miri** (which cannot run the instructions that set the modes): a
//!   software fallback in the engine, which flushes the subnormal values that a vertex writes to
//!   its `f32` fields after it runs. Intermediate values inside a codelet are then not flushed:
//!   the fallback is exact for codelets whose subnormals only pass through memory, an
//!   approximation otherwise ([`hardware_flush`] says which applies).
//!
//! A flushed zero keeps its sign. The modes are per thread and restored when the run ends, so
//! code the user runs on the same threads between runs keeps IEEE arithmetic. [`FlushGuard`] sets
//! them for host code that must compute as the chip does (the native references that claim bit
//! equality with a simulation use it).
//!
//! One caveat comes with setting the modes from Rust: the compiler assumes IEEE arithmetic when it
//! evaluates constant expressions at compile time, so an operation on constants that yields a
//! subnormal is not flushed. Codelets compute on data read from tile memory, which the compiler
//! cannot fold.

/// Whether this host sets the flush modes in hardware (x86-64 and aarch64, not under Miri).
pub const fn hardware_flush() -> bool {
    cfg!(all(
        any(target_arch = "x86_64", target_arch = "aarch64"),
        not(miri)
    ))
}

#[cfg(all(target_arch = "x86_64", not(miri)))]
mod imp {
    /// MXCSR: FTZ (bit 15) and DAZ (bit 6).
    const FLUSH_BITS: u32 = (1 << 15) | (1 << 6);

    fn get() -> u32 {
        let mut csr: u32 = 0;
        // SAFETY: `stmxcsr` stores the 32-bit MXCSR to the given address, which points to a
        // live, aligned, writable u32 on this stack frame; it changes nothing else.
        unsafe {
            std::arch::asm!("stmxcsr [{}]", in(reg) &mut csr, options(nostack, preserves_flags))
        };
        csr
    }

    fn put(csr: u32) {
        // SAFETY: `ldmxcsr` loads MXCSR from a live, aligned u32. The value is the current
        // MXCSR with only FTZ and DAZ changed (see `set`), so no exception is unmasked and no
        // reserved bit is set (which would fault).
        unsafe {
            std::arch::asm!("ldmxcsr [{}]", in(reg) &csr, options(nostack, readonly, preserves_flags))
        };
    }

    pub(crate) fn flushing() -> bool {
        get() & FLUSH_BITS == FLUSH_BITS
    }

    pub(crate) fn set(flush: bool) {
        let csr = get();
        let new = if flush {
            csr | FLUSH_BITS
        } else {
            csr & !FLUSH_BITS
        };
        if new != csr {
            put(new);
        }
    }
}

#[cfg(all(target_arch = "aarch64", not(miri)))]
mod imp {
    /// FPCR.FZ (bit 24).
    const FZ: u64 = 1 << 24;

    fn get() -> u64 {
        let fpcr: u64;
        // SAFETY: reading FPCR has no side effect.
        unsafe {
            std::arch::asm!("mrs {}, fpcr", out(reg) fpcr, options(nomem, nostack, preserves_flags))
        };
        fpcr
    }

    pub(crate) fn flushing() -> bool {
        get() & FZ != 0
    }

    pub(crate) fn set(flush: bool) {
        let fpcr = get();
        let new = if flush { fpcr | FZ } else { fpcr & !FZ };
        if new != fpcr {
            // SAFETY: writes FPCR with only FZ changed from its current value: no trap is
            // enabled and the rounding mode is kept.
            unsafe {
                std::arch::asm!("msr fpcr, {}", in(reg) new, options(nomem, nostack, preserves_flags))
            };
        }
    }
}

#[cfg(not(all(any(target_arch = "x86_64", target_arch = "aarch64"), not(miri))))]
mod imp {
    pub(crate) fn flushing() -> bool {
        false
    }

    pub(crate) fn set(_flush: bool) {}
}

/// Whether the calling thread's arithmetic flushes subnormals (always `false` where
/// [`hardware_flush`] is `false`).
pub fn flushing() -> bool {
    imp::flushing()
}

/// Sets the calling thread's flush modes, or leaves them (returns `false`) where the host has
/// none.
fn set(flush: bool) -> bool {
    imp::set(flush);
    hardware_flush()
}

/// Sets the calling thread's flush modes while it lives, and restores the previous ones when
/// dropped (on the same thread: it is neither `Send` nor `Sync`).
pub struct FlushGuard {
    previous: bool,
    /// Not `Send`: the modes belong to the thread that set them.
    _thread: std::marker::PhantomData<*const ()>,
}

impl FlushGuard {
    /// Flush subnormals (`true`) or keep IEEE arithmetic (`false`) until the guard drops.
    pub fn new(flush: bool) -> FlushGuard {
        let previous = flushing();
        set(flush);
        FlushGuard {
            previous,
            _thread: std::marker::PhantomData,
        }
    }
}

impl Drop for FlushGuard {
    fn drop(&mut self) {
        set(self.previous);
    }
}

/// `x`, or zero of the same sign if `x` is subnormal: the chip's rule, in software.
#[inline]
pub fn flush_f32(x: f32) -> f32 {
    if x.is_subnormal() {
        f32::from_bits(x.to_bits() & 0x8000_0000)
    } else {
        x
    }
}

/// [`flush_f32`] over a slice, in place; returns how many values were flushed.
pub fn flush_slice(xs: &mut [f32]) -> usize {
    let mut n = 0;
    for x in xs {
        if x.is_subnormal() {
            *x = f32::from_bits(x.to_bits() & 0x8000_0000);
            n += 1;
        }
    }
    n
}

// Correctly rounded host conversion of f64 to f16.

/// `x` rounded to the nearest f16, ties to even: the correctly rounded conversion, the same
/// bits on every host.
///
/// It exists because `half::f16::from_f64` (which [`f16`](crate::f16) re-exports) is not
/// correctly rounded: built without `std` (as poplar-rs builds `half`) it drops the low 32
/// bits of the f64 before it rounds, so `1 + 2⁻¹¹ + 2⁻²¹` (just above a tie) becomes 1 instead
/// of `1 + 2⁻¹⁰`; on x86 hosts with F16C it converts through f32 and rounds twice. Host
/// references that round an exact f64 result once to f16 must use this function.
/// (`half::f16::from_f32` is correctly rounded.)
///
/// IEEE rules throughout: magnitudes of 65520 (halfway between 65504, the largest finite f16,
/// and 2¹⁶) and above become infinity; results below the smallest normal are subnormal, and
/// below half the smallest subnormal (2⁻²⁵) zero; NaN stays NaN (quiet, with the top bits of
/// its payload); the sign of zeros, infinities and NaNs is kept.
pub fn f16_from_f64(x: f64) -> half::f16 {
    let bits = x.to_bits();
    let sign = ((bits >> 48) & 0x8000) as u16;
    let exp = ((bits >> 52) & 0x7FF) as i32;
    let man = bits & ((1u64 << 52) - 1);
    if exp == 0x7FF {
        let payload = if man == 0 {
            0
        } else {
            0x200 | (man >> 42) as u16
        };
        return half::f16::from_bits(sign | 0x7C00 | payload);
    }
    if exp == 0 {
        // Zero or an f64 subnormal (below 2⁻¹⁰²²): far below half the smallest f16.
        return half::f16::from_bits(sign);
    }
    let e = exp - 1023; // x = 1.man · 2^e
    if e > 15 {
        return half::f16::from_bits(sign | 0x7C00);
    }
    let sig = (1u64 << 52) | man; // x = sig · 2^(e − 52)
                                  // The f16 result is q · 2^(E − 10) with E = max(e, −14) (q includes the implicit bit of a
                                  // normal result): drop `shift` bits of `sig`.
    let (shift, base) = if e >= -14 {
        (42u32, ((e + 14) as u16) << 10) // biased exponent e + 15, less the implicit bit in q
    } else {
        ((28 - e) as u32, 0) // subnormal: q counts units of 2⁻²⁴
    };
    if shift > 53 {
        // Below half of 2⁻²⁴ (sig < 2⁵³ ≤ 2^(shift − 1)).
        return half::f16::from_bits(sign);
    }
    let q = sig >> shift;
    let rem = sig & ((1u64 << shift) - 1);
    let half_unit = 1u64 << (shift - 1);
    let up = rem > half_unit || (rem == half_unit && q & 1 == 1);
    // A carry out of the significand moves to the next binade (or to infinity at the top):
    // the bit patterns of f16 magnitudes are ordered like their values.
    half::f16::from_bits(sign | (base + q as u16 + u16::from(up)))
}

/// `x`, with any NaN replaced by the one quiet NaN `f32::NAN` (`0x7fc0_0000`).
///
/// IEEE 754 and Rust leave the sign and payload of a NaN computed from NaN operands open, and
/// the compiler may swap the operands of `a + b` or `a * b` (they commute), so `NaN + (−NaN)`
/// can give either NaN depending on the code it chose — which differs between instruction-set
/// levels ([`crate::isa`]). A kernel whose outputs can be NaN and that promises the same bits on
/// every level stores `canonical_nan(result)`: one compare and select a lane.
#[inline(always)]
pub fn canonical_nan(x: f32) -> f32 {
    if x.is_nan() {
        f32::NAN
    } else {
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest normal f32, read through `black_box` so the compiler cannot fold it.
    fn tiny() -> f32 {
        std::hint::black_box(f32::MIN_POSITIVE)
    }

    #[test]
    fn canonical_nan_keeps_numbers_and_makes_every_nan_one() {
        for x in [0.0f32, -0.0, 1e-45, -1.0, f32::INFINITY, f32::MIN] {
            assert_eq!(canonical_nan(x).to_bits(), x.to_bits());
        }
        for bits in [0x7fc0_0000u32, 0xffc0_0000, 0x7f80_0001, 0xffff_ffff] {
            let nan = f32::from_bits(bits);
            assert_eq!(canonical_nan(nan).to_bits(), 0x7fc0_0000, "{bits:#x}");
        }
    }

    #[test]
    fn the_guard_flushes_results_and_inputs_and_restores_ieee() {
        let _ieee = FlushGuard::new(false);
        // IEEE: half the smallest normal is a subnormal, and a subnormal input is not zero.
        let sub = tiny() / std::hint::black_box(2.0);
        assert!(sub.is_subnormal());
        assert!(std::hint::black_box(sub) * 2.0 == tiny());
        {
            let _g = FlushGuard::new(true);
            if hardware_flush() {
                assert!(flushing());
                // Result flushed.
                assert_eq!(tiny() / std::hint::black_box(2.0), 0.0);
                // Input read as zero.
                assert_eq!(std::hint::black_box(sub) * std::hint::black_box(2.0), 0.0);
                // The sign of a flushed result is kept.
                assert!((-tiny() / std::hint::black_box(2.0)).is_sign_negative());
            }
        }
        assert!(!flushing());
        assert!((tiny() / std::hint::black_box(2.0)).is_subnormal());
    }

    #[test]
    fn software_flush_keeps_signs_and_normals() {
        let sub = f32::from_bits(1);
        assert_eq!(flush_f32(sub).to_bits(), 0);
        assert_eq!(flush_f32(-sub).to_bits(), 0x8000_0000);
        assert_eq!(flush_f32(f32::MIN_POSITIVE), f32::MIN_POSITIVE);
        let mut xs = [sub, 1.0, -sub, 0.0, f32::NAN];
        assert_eq!(flush_slice(&mut xs), 2);
        assert_eq!(xs[..4], [0.0, 1.0, -0.0, 0.0]);
        assert!(xs[4].is_nan());
    }
}
