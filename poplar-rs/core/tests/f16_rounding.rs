//! f64 → f16 and f32 → f16 conversions against an independent oracle: the nearest entry of
//! the sorted table of every finite f16 value (as exact f64s), ties to the even bit pattern,
//! with 2¹⁶ standing for the value after 65504 (rounding to it means infinity, as IEEE
//! says). Checked at every rounding boundary of both signs, on pseudo-random inputs, and on
//! the special values.

use poplar_core::f16;
use poplar_core::fp::f16_from_f64;
use poplar_core::rand::SplitMix64;

/// The non-negative finite f16 values in increasing order (bit patterns 0x0000..=0x7BFF, whose
/// order is the values' order), as f64 (exact), followed by 2¹⁶ for infinity (bits 0x7C00).
fn table() -> Vec<(f64, u16)> {
    let mut t: Vec<(f64, u16)> = (0..=0x7BFFu16)
        .map(|b| (f16::from_bits(b).to_f64(), b))
        .collect();
    assert!(t.windows(2).all(|w| w[0].0 < w[1].0));
    t.push((65536.0, 0x7C00));
    t
}

/// The correctly rounded f16 of `x` (bits), from the table: the nearest entry to `|x|`, ties
/// to the even bit pattern; the sign of `x` on top (so -0 and negative values that round to
/// zero give -0). NaN gives `None`.
fn oracle(t: &[(f64, u16)], x: f64) -> Option<u16> {
    if x.is_nan() {
        return None;
    }
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = x.abs();
    let last = t[t.len() - 1];
    if a >= last.0 {
        return Some(sign | last.1);
    }
    // The last entry <= a: t[i].0 <= a < t[i + 1].0.
    let i = t.partition_point(|&(v, _)| v <= a) - 1;
    let (lo, hi) = (t[i], t[i + 1]);
    let mid = (lo.0 + hi.0) / 2.0; // exact: the two differ by one f16 step
    let bits = if a < mid {
        lo.1
    } else if a > mid {
        hi.1
    } else if lo.1.is_multiple_of(2) {
        lo.1
    } else {
        hi.1
    };
    Some(sign | bits)
}

/// Every input at and next to a rounding boundary: for each pair of adjacent entries of the
/// table (the zero / smallest subnormal pair, the subnormals, the normals and 65504 / 2¹⁶),
/// both members, their midpoint and the f64s just above and below it, with both signs.
fn boundary_inputs(t: &[(f64, u16)]) -> Vec<f64> {
    let mut xs = Vec::new();
    for w in t.windows(2) {
        let (lo, hi) = (w[0].0, w[1].0);
        let mid = (lo + hi) / 2.0;
        // Positive, finite, non-zero: the neighbouring f64s are the bit patterns ±1.
        let above = f64::from_bits(mid.to_bits() + 1);
        let below = f64::from_bits(mid.to_bits() - 1);
        for x in [lo, hi, mid, above, below] {
            xs.push(x);
            xs.push(-x);
        }
    }
    xs
}

/// `n` pseudo-random f64s (core's SplitMix64, seeded, so failures reproduce): random sign and 52-bit mantissa with an exponent from 2⁻³⁰ (below
/// half the smallest subnormal) to 2¹⁸ (beyond the f16 range), plus one in 16 with all 64 bits
/// random.
fn random_inputs(n: usize) -> Vec<f64> {
    let mut rng = SplitMix64::new(0x9E37_79B9_7F4A_7C15);
    (0..n)
        .map(|_| {
            let r = rng.next_u64();
            if r.is_multiple_of(16) {
                return f64::from_bits(rng.next_u64());
            }
            let exp = (r >> 8) % 49; // 2^-30 ..= 2^18
            let bits = (r & 1) << 63 | (1023 - 30 + exp) << 52 | (rng.next_u64() >> 12);
            f64::from_bits(bits)
        })
        .collect()
}

fn special_inputs() -> Vec<f64> {
    let tiny = 2f64.powi(-25); // half the smallest subnormal: a tie, to zero
    vec![
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MAX,
        f64::MIN,
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        f64::from_bits(1), // the smallest f64 subnormal
        -f64::from_bits(1),
        tiny,
        -tiny,
        f64::from_bits(tiny.to_bits() - 1),
        f64::from_bits(tiny.to_bits() + 1),
        1e-300,
        -1e-300,
        65504.0,
        65519.99999999999,
        65520.0,
        -65520.0,
        65536.0,
        1e5,
        -1e5,
        1e300,
        -1e300,
    ]
}

/// An input of a conversion: its value (exact as f64) and its bits for messages.
trait Input: Copy + std::fmt::LowerExp {
    fn value(self) -> f64;
    fn hex(self) -> String;
}

impl Input for f64 {
    fn value(self) -> f64 {
        self
    }
    fn hex(self) -> String {
        format!("{:#018x}", self.to_bits())
    }
}

impl Input for f32 {
    fn value(self) -> f64 {
        f64::from(self)
    }
    fn hex(self) -> String {
        format!("{:#010x}", self.to_bits())
    }
}

/// `convert` against the oracle on `xs`; panics with the input's bits, the result and the
/// oracle's on the first difference. NaN must give a NaN of the same sign. Returns how many
/// inputs it checked.
fn check_all<T: Input>(
    t: &[(f64, u16)],
    xs: &[T],
    what: &str,
    convert: impl Fn(T) -> f16,
) -> usize {
    for &x in xs {
        let got = convert(x);
        match oracle(t, x.value()) {
            None => assert!(
                got.is_nan() && got.is_sign_negative() == x.value().is_sign_negative(),
                "{what}: input {} (NaN): got {:#06x}, want a NaN of the same sign",
                x.hex(),
                got.to_bits()
            ),
            Some(want) => assert_eq!(
                got.to_bits(),
                want,
                "{what}: input {} ({x:e}): got {:#06x} ({}), want {want:#06x} ({})",
                x.hex(),
                got.to_bits(),
                got,
                f16::from_bits(want)
            ),
        }
    }
    xs.len()
}

#[test]
fn f16_from_f64_is_correctly_rounded_at_every_boundary() {
    let t = table();
    let xs = boundary_inputs(&t);
    // 31,744 pairs (0x7BFF + the overflow pair) × 5 inputs × 2 signs.
    assert_eq!(xs.len(), 0x7C00 * 10);
    let n = check_all(&t, &xs, "f16_from_f64", f16_from_f64);
    eprintln!("f16_from_f64: {n} boundary inputs checked");
}

#[test]
fn f16_from_f64_is_correctly_rounded_on_random_and_special_inputs() {
    let t = table();
    let xs = random_inputs(1_000_000);
    // The inputs reach every region of the oracle's results: zero, subnormals, normals,
    // overflow.
    let results: Vec<u16> = xs
        .iter()
        .filter_map(|&x| oracle(&t, x))
        .map(|b| b & 0x7FFF)
        .collect();
    assert!(results.contains(&0));
    assert!(results.iter().any(|&b| b > 0 && b < 0x400));
    assert!(results.iter().any(|&b| (0x400..0x7C00).contains(&b)));
    assert!(results.contains(&0x7C00));
    let mut n = check_all(&t, &xs, "f16_from_f64", f16_from_f64);
    n += check_all(&t, &special_inputs(), "f16_from_f64", f16_from_f64);
    for nan in [
        f64::NAN,
        -f64::NAN,
        f64::from_bits(0x7FF0_0000_0000_0001), // signalling, payload only in the low bits
        f64::from_bits(0xFFF8_0000_0000_1234),
    ] {
        n += check_all(&t, &[nan], "f16_from_f64", f16_from_f64);
    }
    eprintln!("f16_from_f64: {n} random and special inputs checked");
}

/// The example of the issue: just above the tie between 1 and 1 + 2⁻¹⁰, so it rounds up.
/// (`half::f16::from_f64`, built without `std` as poplar-rs builds it, drops the 2⁻²¹ with
/// the low 32 bits, sees a tie and gives 1.0.)
#[test]
fn just_above_a_tie_rounds_up() {
    let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-21);
    assert_eq!(f16_from_f64(x).to_f64(), 1.0 + 2f64.powi(-10));
    assert_eq!(f16_from_f64(x).to_bits(), 0x3C01);
    // The tie itself goes to the even neighbour, 1.0; just below it too.
    assert_eq!(f16_from_f64(1.0 + 2f64.powi(-11)).to_bits(), 0x3C00);
    assert_eq!(
        f16_from_f64(1.0 + 2f64.powi(-11) - 2f64.powi(-40)).to_bits(),
        0x3C00
    );
}

/// `half::f16::from_f32`, which the codelets use to round their f32 results, at the same
/// boundaries (every f16 value and every midpoint of neighbours is exact in f32; the inputs
/// next to a midpoint are the neighbouring f32s) and on pseudo-random f32s: correctly
/// rounded, so poplar-rs needs no conversion of its own for f32.
#[test]
fn half_from_f32_is_correctly_rounded_at_every_boundary() {
    let t = table();
    let mut xs = Vec::new();
    for w in t.windows(2) {
        let (lo, hi) = (w[0].0 as f32, w[1].0 as f32);
        let mid = (lo + hi) / 2.0;
        assert_eq!(
            f64::from(mid),
            (w[0].0 + w[1].0) / 2.0,
            "midpoint exact in f32"
        );
        let above = f32::from_bits(mid.to_bits() + 1);
        let below = f32::from_bits(mid.to_bits() - 1);
        for x in [lo, hi, mid, above, below] {
            xs.push(x);
            xs.push(-x);
        }
    }
    let mut rng = SplitMix64::new(0x2545_F491_4F6C_DD1D);
    for _ in 0..1_000_000 {
        let r = rng.next_u64();
        let x = if r.is_multiple_of(16) {
            f32::from_bits((r >> 32) as u32)
        } else {
            let exp = ((r >> 8) % 49) as u32; // 2^-30 ..= 2^18
            f32::from_bits(((r & 1) as u32) << 31 | (127 - 30 + exp) << 23 | (r >> 41) as u32)
        };
        xs.push(x);
    }
    for x in special_inputs() {
        xs.push(x as f32);
    }
    xs.extend([f32::NAN, -f32::NAN, f32::from_bits(1), -f32::from_bits(1)]);
    let n = check_all(&t, &xs, "half::f16::from_f32", f16::from_f32);
    eprintln!("half::f16::from_f32: {n} inputs checked");
}
