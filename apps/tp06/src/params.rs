//! TP06 parameters, transcribed from `shared/reference/tp06/tt06_{epi,M,endo}.cellml`.
//!
//! Units follow the CellML files: mV, ms, mM, pA/pF (= A/F), nS/pF (= mS/µF), µF, µm³.
//! The CellML unit annotations that carry power-of-ten multipliers (`1 [1 (1e+09)]`, …) are
//! dimension bookkeeping only; numerically they are 1, as in the original model code.

use super::real::Real;
use crate::CellType;

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

/// Scalings of TP06's maximal conductances and pump/exchanger rates (1 = the published model),
/// as used to model drugs (a block of I_Kr: `g_kr` 0.5) or disease (heart failure lowers
/// `g_to`, `g_k1` and raises `k_naca`). openCARP's `GKr*0.5` is `g_kr: 0.5` here.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Scalings {
    pub g_na: f64,
    pub g_k1: f64,
    pub g_to: f64,
    pub g_kr: f64,
    pub g_ks: f64,
    pub g_cal: f64,
    pub g_bna: f64,
    pub g_bca: f64,
    pub g_pca: f64,
    pub g_pk: f64,
    /// I_NaCa's maximal rate k_NaCa.
    pub k_naca: f64,
    /// I_NaK's maximal rate P_NaK.
    pub p_nak: f64,
}

impl Default for Scalings {
    fn default() -> Self {
        Scalings::ONE
    }
}

impl Scalings {
    /// The published model.
    pub const ONE: Scalings = Scalings {
        g_na: 1.0,
        g_k1: 1.0,
        g_to: 1.0,
        g_kr: 1.0,
        g_ks: 1.0,
        g_cal: 1.0,
        g_bna: 1.0,
        g_bca: 1.0,
        g_pca: 1.0,
        g_pk: 1.0,
        k_naca: 1.0,
        p_nak: 1.0,
    };

    /// The names accepted by [`Scalings::set`], in order.
    pub const NAMES: [&'static str; 12] = [
        "g_na", "g_k1", "g_to", "g_kr", "g_ks", "g_cal", "g_bna", "g_bca", "g_pca", "g_pk",
        "k_naca", "p_nak",
    ];

    fn slots(&mut self) -> [&mut f64; 12] {
        [
            &mut self.g_na,
            &mut self.g_k1,
            &mut self.g_to,
            &mut self.g_kr,
            &mut self.g_ks,
            &mut self.g_cal,
            &mut self.g_bna,
            &mut self.g_bca,
            &mut self.g_pca,
            &mut self.g_pk,
            &mut self.k_naca,
            &mut self.p_nak,
        ]
    }

    /// The scalings as (name, value) pairs, in [`Scalings::NAMES`] order.
    pub fn entries(&self) -> [(&'static str, f64); 12] {
        let mut c = *self;
        let vals = c.slots().map(|v| *v);
        std::array::from_fn(|i| (Self::NAMES[i], vals[i]))
    }

    /// Sets the scaling `name` (case-insensitive, `GKr` and `g_kr` alike). Errors name the
    /// parameter and list the known ones; a factor must be finite and at least 0.
    pub fn set(&mut self, name: &str, factor: f64) -> Result<(), String> {
        let i = Self::index(name)?;
        if !(factor.is_finite() && factor >= 0.0) {
            return Err(format!(
                "TP06 scaling {name} = {factor}: a factor must be finite and at least 0"
            ));
        }
        *self.slots()[i] = factor;
        Ok(())
    }

    /// The position in [`Scalings::NAMES`] of `name` (case-insensitive, `GKr` and `g_kr`
    /// alike); the error lists the known names.
    fn index(name: &str) -> Result<usize, String> {
        let key: String = name
            .chars()
            .filter(|c| *c != '_')
            .flat_map(char::to_lowercase)
            .collect();
        Self::NAMES
            .iter()
            .position(|n| n.replace('_', "") == key)
            .ok_or_else(|| {
                format!(
                    "unknown TP06 parameter {name:?}: the scalable ones are {}",
                    Self::NAMES.join(", ")
                )
            })
    }

    /// Parses `GKr*0.5,GCaL*1.2` or `g_kr=0.5,g_cal=1.2` on top of `self`. A parameter named
    /// twice (`GKr*0.5,g_kr=2`) is an error, not the last one winning.
    pub fn parse_onto(mut self, text: &str) -> Result<Scalings, String> {
        let mut given = [false; 12];
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (name, value) = item
                .split_once(['*', '='])
                .ok_or_else(|| format!("TP06 scaling {item:?}: write NAME*FACTOR, e.g. GKr*0.5"))?;
            let factor: f64 = value
                .trim()
                .parse()
                .map_err(|_| format!("TP06 scaling {item:?}: {value:?} is not a number"))?;
            let i = Self::index(name.trim())?;
            if std::mem::replace(&mut given[i], true) {
                return Err(format!(
                    "TP06 scaling {} is given twice ({}): give each parameter once",
                    name.trim(),
                    Self::NAMES[i]
                ));
            }
            self.set(name.trim(), factor)?;
        }
        Ok(self)
    }

    /// Checks every factor (as [`Scalings::set`] does); the error names the parameter.
    pub fn check(&self) -> Result<(), String> {
        for (name, v) in self.entries() {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!(
                    "TP06 scaling {name} = {v}: a factor must be finite and at least 0"
                ));
            }
        }
        Ok(())
    }

    /// Whether every factor is 1.
    pub fn is_one(&self) -> bool {
        *self == Scalings::ONE
    }
}

/// One cell model of a run: a TP06 cell type with scaled conductances. A tissue run has a small
/// table of them and a per-cell index into it.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellModel {
    pub cell_type: CellType,
    #[serde(default)]
    pub scale: Scalings,
}

impl CellModel {
    /// The published model of `cell_type`.
    pub fn published(cell_type: CellType) -> CellModel {
        CellModel {
            cell_type,
            scale: Scalings::ONE,
        }
    }
}

/// Number of parameters in a [`CellParams`] ([`CellParams::to_array`]).
pub const N_PARAMS: usize = 18;

/// The parameters of one cell model as the kernel uses them: those that differ between endo-,
/// mid-myocardial (M) and epicardial cells, and the (scaled) conductances.
///
/// The s-gate time constant of all three types is written as one formula,
/// τs = A·e^(−(V+B)²/C) + D/(1+e^((V−20)/5)) + E, so that a batch of mixed cell types runs one
/// code path: epi/M use (A,B,C,D,E) = (85, 45, 320, 5, 3), endo uses (1000, 67, 1000, 0, 8),
/// which reproduces the CellML expressions exactly (the D-term is an exact 0 for endo).
///
/// Each conductance is its published constant times the scaling, computed in f64 and then
/// rounded once, so unit scalings give exactly the published constants' bits.
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
    /// g_Na (nS/pF).
    pub g_na: F,
    /// g_K1 (nS/pF).
    pub g_k1: F,
    /// g_Kr (nS/pF).
    pub g_kr: F,
    /// g_CaL·2F: I_CaL's factor in front of d·f·f2·fCass·B(x)·(¼Ca_ss·eˣ − Ca_o).
    pub g_cal_2f: F,
    pub g_bna: F,
    pub g_bca: F,
    pub g_pca: F,
    pub g_pk: F,
    /// k_NaCa.
    pub k_naca: F,
    /// P_NaK·K_o/(K_o + K_mk): I_NaK's factor in front of Na_i/(…).
    pub p_nak_ko: F,
}

impl<F: Real> CellParams<F> {
    /// Parameters of a cell model.
    pub fn from_model(m: &CellModel) -> Self {
        let (endo, mid) = (m.cell_type == CellType::Endo, m.cell_type == CellType::Mid);
        let sel = |c: bool, a: f64, b: f64| if c { a } else { b };
        let s = &m.scale;
        CellParams {
            g_ks: F::c(sel(mid, 0.098, 0.392) * s.g_ks),
            g_to: F::c(sel(endo, 0.073, 0.294) * s.g_to),
            s_inf_scale: F::c(sel(endo, (28.0f64 / 5.0).exp(), (20.0f64 / 5.0).exp())),
            tau_s_a: F::c(sel(endo, 1000.0, 85.0)),
            tau_s_b: F::c(sel(endo, 67.0, 45.0)),
            tau_s_inv_c: F::c(sel(endo, 1.0 / 1000.0, 1.0 / 320.0)),
            tau_s_d: F::c(sel(endo, 0.0, 5.0)),
            tau_s_e: F::c(sel(endo, 8.0, 3.0)),
            g_na: F::c(G_NA * s.g_na),
            g_k1: F::c(G_K1 * s.g_k1),
            g_kr: F::c(G_KR * s.g_kr),
            g_cal_2f: F::c(G_CAL * s.g_cal * 2.0 * FARADAY),
            g_bna: F::c(G_BNA * s.g_bna),
            g_bca: F::c(G_BCA * s.g_bca),
            g_pca: F::c(G_PCA * s.g_pca),
            g_pk: F::c(G_PK * s.g_pk),
            k_naca: F::c(K_NACA * s.k_naca),
            p_nak_ko: F::c(P_NAK * s.p_nak * K_O / (K_O + K_MK)),
        }
    }

    /// Parameters of the published model of `ct`.
    pub fn new(ct: CellType) -> Self {
        Self::from_model(&CellModel::published(ct))
    }

    /// Parameters of a cell type stored as `u8` (`CellType as u8`). Values other than 0 (endo)
    /// and 1 (mid) are treated as epicardial rather than rejected.
    pub fn from_u8(ct: u8) -> Self {
        Self::new(match ct {
            0 => CellType::Endo,
            1 => CellType::Mid,
            _ => CellType::Epi,
        })
    }

    /// The parameters as an array (the kernel's per-block, per-lane layout).
    #[inline(always)]
    pub fn to_array(&self) -> [F; N_PARAMS] {
        [
            self.g_ks,
            self.g_to,
            self.s_inf_scale,
            self.tau_s_a,
            self.tau_s_b,
            self.tau_s_inv_c,
            self.tau_s_d,
            self.tau_s_e,
            self.g_na,
            self.g_k1,
            self.g_kr,
            self.g_cal_2f,
            self.g_bna,
            self.g_bca,
            self.g_pca,
            self.g_pk,
            self.k_naca,
            self.p_nak_ko,
        ]
    }

    /// Lane `lane` of per-lane rows laid out as [`CellParams::to_array`] (the kernel's block
    /// buffers), field by field so that the vectorised loop loads each row directly.
    #[inline(always)]
    pub fn from_lane<const B: usize>(rows: &[[F; B]; N_PARAMS], lane: usize) -> Self {
        CellParams {
            g_ks: rows[0][lane],
            g_to: rows[1][lane],
            s_inf_scale: rows[2][lane],
            tau_s_a: rows[3][lane],
            tau_s_b: rows[4][lane],
            tau_s_inv_c: rows[5][lane],
            tau_s_d: rows[6][lane],
            tau_s_e: rows[7][lane],
            g_na: rows[8][lane],
            g_k1: rows[9][lane],
            g_kr: rows[10][lane],
            g_cal_2f: rows[11][lane],
            g_bna: rows[12][lane],
            g_bca: rows[13][lane],
            g_pca: rows[14][lane],
            g_pk: rows[15][lane],
            k_naca: rows[16][lane],
            p_nak_ko: rows[17][lane],
        }
    }

    /// The inverse of [`CellParams::to_array`].
    #[inline(always)]
    pub fn from_array(a: [F; N_PARAMS]) -> Self {
        let [g_ks, g_to, s_inf_scale, tau_s_a, tau_s_b, tau_s_inv_c, tau_s_d, tau_s_e, g_na, g_k1, g_kr, g_cal_2f, g_bna, g_bca, g_pca, g_pk, k_naca, p_nak_ko] =
            a;
        CellParams {
            g_ks,
            g_to,
            s_inf_scale,
            tau_s_a,
            tau_s_b,
            tau_s_inv_c,
            tau_s_d,
            tau_s_e,
            g_na,
            g_k1,
            g_kr,
            g_cal_2f,
            g_bna,
            g_bca,
            g_pca,
            g_pk,
            k_naca,
            p_nak_ko,
        }
    }
}
