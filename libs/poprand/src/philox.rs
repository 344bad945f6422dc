//! Philox4x32-10, the counter-based generator of Salmon, Moraes, Dror and Shaw, "Parallel
//! random numbers: as easy as 1, 2, 3" (SC 2011), written from the paper's description: a
//! 128-bit counter and a 64-bit key give 128 random bits through ten rounds of
//!
//! ```text
//! (hi0, lo0) = M0 · c0,   (hi1, lo1) = M1 · c2            (32 × 32 → 64-bit products)
//! c = [hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0]
//! ```
//!
//! with `M0 = 0xD2511F53`, `M1 = 0xCD9E8D57`, and the key bumped by the Weyl constants
//! `W0 = 0x9E3779B9`, `W1 = 0xBB67AE85` between rounds. Integer arithmetic only: the same bits
//! on every host, thread and instruction-set level. The known-answer tests below are the three
//! `philox4x32 10` lines of the Random123 distribution's `tests/kat_vectors`
//! (D. E. Shaw Research, Random123 1.14).

/// The first round multiplier.
pub const M0: u32 = 0xD251_1F53;
/// The second round multiplier.
pub const M1: u32 = 0xCD9E_8D57;
/// The Weyl increment of key word 0 (the golden ratio).
pub const W0: u32 = 0x9E37_79B9;
/// The Weyl increment of key word 1 (√3 − 1).
pub const W1: u32 = 0xBB67_AE85;

#[inline(always)]
fn mulhilo(a: u32, b: u32) -> (u32, u32) {
    let p = u64::from(a) * u64::from(b);
    ((p >> 32) as u32, p as u32)
}

/// Philox4x32 with `rounds` rounds (the standard is 10) of counter `ctr` under key `key`.
#[inline(always)]
pub fn philox4x32(rounds: u32, ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let mut c = ctr;
    let mut k = key;
    for r in 0..rounds {
        if r > 0 {
            k = [k[0].wrapping_add(W0), k[1].wrapping_add(W1)];
        }
        let (hi0, lo0) = mulhilo(M0, c[0]);
        let (hi1, lo1) = mulhilo(M1, c[2]);
        c = [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0];
    }
    c
}

/// Philox4x32-10: 128 random bits of counter `ctr` under key `key`.
#[inline(always)]
pub fn philox4x32_10(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    philox4x32(10, ctr, key)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123 1.14, `tests/kat_vectors`: `philox4x32 10 ctr[4] key[2] → out[4]`.
    #[test]
    fn random123_known_answers() {
        let kat: [([u32; 4], [u32; 2], [u32; 4]); 3] = [
            (
                [0, 0, 0, 0],
                [0, 0],
                [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8],
            ),
            (
                [u32::MAX; 4],
                [u32::MAX; 2],
                [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd],
            ),
            (
                [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
                [0xa409_3822, 0x299f_31d0],
                [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1],
            ),
        ];
        for (ctr, key, want) in kat {
            assert_eq!(
                philox4x32_10(ctr, key),
                want,
                "ctr {ctr:08x?} key {key:08x?}"
            );
        }
        // Fewer rounds are a different function (the test can fail).
        assert_ne!(philox4x32(7, [0; 4], [0; 2]), philox4x32_10([0; 4], [0; 2]));
    }
}
