//! TP06 parameters, transcribed from `shared/reference/tp06/tt06_{epi,M,endo}.cellml`.
//!
//! Units follow the CellML files: mV, ms, mM, pA/pF (= A/F), nS/pF (= mS/µF), µF, µm³.
//! The CellML unit annotations that carry power-of-ten multipliers (`1 [1 (1e+09)]`, …) are
//! dimension bookkeeping only; numerically they are 1, as in the original model code.

use super::real::Real;
use crate::mesh::CellType;

/// Gas constant R (mJ/(mol·K)).
pub const R: f64 = 8314.472;
/// Temperature T (K).
pub const T: f64 = 310.0;
/// Faraday constant F (C/mol).
pub const FARADAY: f64 = 96_485.341_5;
/// RT/F (mV): the thermal voltage.
pub const RT_F: f64 = R * T / FARADAY;
/// F/(RT) (1/mV).
pub const F_RT: f64 = FARADAY / (R * T);

/// Membrane capacitance Cm (µF).
pub const CM: f64 = 0.185;
/// Cytoplasmic volume V_c (µm³ in the file's units).
pub const V_C: f64 = 0.016404;
/// SR volume.
pub const V_SR: f64 = 0.001094;
/// Subspace (dyadic) volume.
pub const V_SS: f64 = 5.468e-5;

/// Extracellular concentrations (mM).
pub const K_O: f64 = 5.4;
pub const NA_O: f64 = 140.0;
pub const CA_O: f64 = 2.0;

/// Permeability ratio of I_Ks to Na⁺.
pub const P_KNA: f64 = 0.03;

/// Maximal conductances (nS/pF) and current amplitudes (pA/pF) shared by all cell types.
pub const G_NA: f64 = 14.838;
pub const G_K1: f64 = 5.405;
pub const G_KR: f64 = 0.153;
pub const G_CAL: f64 = 3.98e-5;
pub const G_BNA: f64 = 0.00029;
pub const G_BCA: f64 = 0.000592;
pub const G_PCA: f64 = 0.1238;
pub const K_PCA: f64 = 0.0005;
pub const G_PK: f64 = 0.0146;
pub const P_NAK: f64 = 2.724;
pub const K_MK: f64 = 1.0;
pub const K_MNA: f64 = 40.0;
pub const K_NACA: f64 = 1000.0;
pub const K_SAT: f64 = 0.1;
pub const KM_CA: f64 = 1.38;
pub const KM_NAI: f64 = 87.5;
pub const ALPHA_NACA: f64 = 2.5;
pub const GAMMA_NACA: f64 = 0.35;

/// Calcium handling.
pub const BUF_C: f64 = 0.2;
pub const K_BUF_C: f64 = 0.001;
pub const BUF_SR: f64 = 10.0;
pub const K_BUF_SR: f64 = 0.3;
pub const BUF_SS: f64 = 0.4;
pub const K_BUF_SS: f64 = 0.00025;
pub const VMAX_UP: f64 = 0.006375;
pub const K_UP: f64 = 0.00025;
pub const V_LEAK: f64 = 0.00036;
pub const V_REL: f64 = 0.102;
pub const V_XFER: f64 = 0.0038;
pub const K1_PRIME: f64 = 0.15;
pub const K2_PRIME: f64 = 0.045;
pub const K3: f64 = 0.06;
pub const K4: f64 = 0.005;
pub const EC: f64 = 1.5;
pub const MAX_SR: f64 = 2.5;
pub const MIN_SR: f64 = 1.0;

/// Conversion of a transmembrane current (pA/pF) into a cytosolic concentration rate (mM/ms)
/// for a monovalent ion: Cm/(V_c·F).
pub const CUR_TO_CONC_C: f64 = CM / (V_C * FARADAY);
/// Same for Ca²⁺ into the dyadic subspace: Cm/(2·V_ss·F).
pub const CUR_TO_CONC_SS: f64 = CM / (2.0 * V_SS * FARADAY);

/// The parameters that differ between endo-, mid-myocardial (M) and epicardial cells.
///
/// The s-gate time constant of all three types is written as one formula,
/// τs = A·e^(−(V+B)²/C) + D/(1+e^((V−20)/5)) + E, so that a batch of mixed cell types runs one
/// code path: epi/M use (A,B,C,D,E) = (85, 45, 320, 5, 3), endo uses (1000, 67, 1000, 0, 8),
/// which reproduces the CellML expressions exactly (the D-term is an exact 0 for endo).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellParams<F> {
    /// g_Ks (nS/pF): epi 0.392, endo 0.392, M 0.098.
    pub g_ks: F,
    /// g_to (nS/pF): epi 0.294, endo 0.073, M 0.294.
    pub g_to: F,
    /// s∞ = 1/(1+e^((V+h)/5)) = 1/(1 + e^(h/5)·e^(V/5)) with h = 20 mV for epi/M, 28 mV for
    /// endo; this is e^(h/5).
    pub s_inf_scale: F,
    pub tau_s_a: F,
    pub tau_s_b: F,
    /// 1/C of the Gaussian term of τs (so the kernel multiplies instead of dividing).
    pub tau_s_inv_c: F,
    pub tau_s_d: F,
    pub tau_s_e: F,
}

impl<F: Real> CellParams<F> {
    /// Parameters of a cell type. Branch-free in `endo`/`mid` so that it vectorises when the
    /// flags come from a per-cell `u8`.
    #[inline(always)]
    pub fn from_flags(endo: bool, mid: bool) -> Self {
        let sel = |c: bool, a: f64, b: f64| F::c(if c { a } else { b });
        CellParams {
            g_ks: sel(mid, 0.098, 0.392),
            g_to: sel(endo, 0.073, 0.294),
            s_inf_scale: sel(endo, (28.0f64 / 5.0).exp(), (20.0f64 / 5.0).exp()),
            tau_s_a: sel(endo, 1000.0, 85.0),
            tau_s_b: sel(endo, 67.0, 45.0),
            tau_s_inv_c: sel(endo, 1.0 / 1000.0, 1.0 / 320.0),
            tau_s_d: sel(endo, 0.0, 5.0),
            tau_s_e: sel(endo, 8.0, 3.0),
        }
    }

    /// Parameters of `ct`.
    #[inline(always)]
    pub fn new(ct: CellType) -> Self {
        Self::from_flags(ct == CellType::Endo, ct == CellType::Mid)
    }

    /// Parameters of a cell type stored as `u8` (`CellType as u8`). Values other than 0 (endo)
    /// and 1 (mid) are treated as epicardial rather than rejected: the kernel has no error path.
    #[inline(always)]
    pub fn from_u8(ct: u8) -> Self {
        Self::from_flags(ct == CellType::Endo as u8, ct == CellType::Mid as u8)
    }
}
