//! The TP06 equations, written once, generic over the scalar type.
//!
//! Every function is `#[inline(always)]` and free of data-dependent branches (piecewise
//! definitions evaluate both sides and select), so that the `f32` instance inlines into the
//! loop over cells of [`super::step_batch`] and that loop auto-vectorises.
//!
//! Where the code deviates in form (not in value) from the CellML text, the comment says why;
//! such rewrites change results only at the level of rounding (≤ 1e-12 relative in `f64`).

use super::params::*;
use super::real::Real;
use super::*;

/// 1/(1+e^(k·x)) for a compile-time constant `k`, the logistic shape most TP06 gates are made
/// of ([`Real::exp_mul`]: in `f32`, e^(k·x) is taken as 2^((k·log₂e)·x)).
#[inline(always)]
fn logistic_mul<F: Real>(x: F, k: f64) -> F {
    F::c(1.0) / (F::c(1.0) + x.exp_mul(k))
}

/// Exponentials of V shared between gates.
///
/// Many TP06 rate functions are logistic in V with the same slope: e^((V+a)/5) appears in
/// five places (m, d, s), e^((V+a)/10) in five (Xr1, f, f2, j), e^((V+a)/7) in three (Xr1, f,
/// f2), e^((V+a)/20) in three (Xr2, d). Each is evaluated as a constant e^(a/k) (folded at
/// compile time) times one shared e^(±V/k), the negative one as a reciprocal: 4 exponentials and
/// 3 divisions instead of 16 exponentials, about 10 % of the kernel. This only changes rounding
/// (≈ 1e-16 relative in f64, a few ulp in f32). With the exponentials' clamping every rate stays
/// finite for |V| ≤ 400 mV (tested), far outside anything a stable simulation produces; beyond
/// that products of shared exponentials can overflow to NaN, which then marks the cell as broken.
#[derive(Debug, Clone, Copy)]
pub(crate) struct VExp<F> {
    /// e^(V/5) and e^(−V/5).
    pub p5: F,
    pub n5: F,
    /// e^(V/7).
    pub p7: F,
    /// e^(V/10) and e^(−V/10).
    pub p10: F,
    pub n10: F,
    /// e^(V/20) and e^(−V/20).
    pub p20: F,
    pub n20: F,
}

impl<F: Real> VExp<F> {
    #[inline(always)]
    pub(crate) fn new(v: F) -> Self {
        let one = F::c(1.0);
        let p5 = v.exp_mul(0.2);
        let p10 = v.exp_mul(0.1);
        let p20 = v.exp_mul(0.05);
        VExp {
            p5,
            n5: one / p5,
            p7: v.exp_mul(1.0 / 7.0),
            p10,
            n10: one / p10,
            p20,
            n20: one / p20,
        }
    }
}

/// c·e^(x) for a compile-time constant c = e^(a) (`ea(a)` folds to a constant).
#[inline(always)]
fn ea<F: Real>(a: f64) -> F {
    F::c(a.exp())
}

/// 1/(1 + c·e), the logistic with a precomputed exponential.
#[inline(always)]
fn logistic_of<F: Real>(c: f64, e: F) -> F {
    F::c(1.0) / (F::c(1.0) + ea::<F>(c) * e)
}

/// The Bernoulli function B(x) = x/(eˣ−1), with B(0) = 1.
///
/// I_CaL contains (V−15)/(e^(2(V−15)F/RT)−1), a removable 0/0 at V = 15 mV. The CellML files
/// average the current over [14.999, 15.001] mV there; we instead use the Taylor series
/// 1 − x/2 + x²/12 − x⁴/720 + x⁶/30240 − x⁸/1209600 for |x| below a type-dependent limit, which
/// is exact to rounding, continuous, and cannot produce NaN (the denominator of the discarded
/// branch is replaced by 1). At exactly 15 mV the CellML average equals the limit to ~1e-9
/// relative; elsewhere inside its ±1 µV window the CellML's constant differs from the function
/// by up to 4e-5 relative (measured against myokit), outside it they agree to rounding.
///
/// `ex` is eˣ, computed by the caller (which needs it too).
#[inline(always)]
pub(crate) fn bernoulli<F: Real>(x: F, ex: F) -> F {
    let small = x.abs() < F::c(F::BERNOULLI_SERIES_LIMIT);
    let x2 = x * x;
    let series = F::c(1.0) - F::c(0.5) * x
        + x2 * (F::c(1.0 / 12.0)
            + x2 * (F::c(-1.0 / 720.0)
                + x2 * (F::c(1.0 / 30240.0) + x2 * F::c(-1.0 / 1_209_600.0))));
    let denom = if small { F::c(1.0) } else { ex - F::c(1.0) };
    let quotient = x / denom;
    if small {
        series
    } else {
        quotient
    }
}

/// Reversal potentials (mV).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reversal<F> {
    pub e_na: F,
    pub e_k: F,
    pub e_ks: F,
    pub e_ca: F,
}

/// ln(c/x) is evaluated as ln c − ln x with ln c folded at compile time: one division less
/// per potential in the kernel.
#[inline(always)]
pub(crate) fn reversal<F: Real>(y: &[F; N_STATES]) -> Reversal<F> {
    let rt_f = F::c(RT_F);
    Reversal {
        e_na: rt_f * (F::c(NA_O.ln()) - y[NA_I].ln()),
        e_k: rt_f * (F::c(K_O.ln()) - y[K_I].ln()),
        e_ks: rt_f * (F::c((K_O + P_KNA * NA_O).ln()) - (y[K_I] + F::c(P_KNA) * y[NA_I]).ln()),
        e_ca: F::c(0.5) * rt_f * (F::c(CA_O.ln()) - y[CA_I].ln()),
    }
}

/// All membrane currents (pA/pF) and SR fluxes (mM/ms) of one cell, as named in the CellML.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Currents<F> {
    pub i_na: F,
    pub i_k1: F,
    pub i_to: F,
    pub i_kr: F,
    pub i_ks: F,
    pub i_cal: F,
    pub i_naca: F,
    pub i_nak: F,
    pub i_pca: F,
    pub i_pk: F,
    pub i_bna: F,
    pub i_bca: F,
    /// SR leak flux (mM/ms).
    pub i_leak: F,
    /// SERCA uptake flux (mM/ms).
    pub i_up: F,
    /// RyR release flux (mM/ms).
    pub i_rel: F,
    /// Subspace → cytosol diffusion flux (mM/ms).
    pub i_xfer: F,
}

impl<F: Real> Currents<F> {
    /// Total ionic current (pA/pF), without the stimulus: dV/dt = −(i_ion + i_stim).
    #[inline(always)]
    pub fn i_ion(&self) -> F {
        self.i_k1
            + self.i_to
            + self.i_kr
            + self.i_ks
            + self.i_cal
            + self.i_nak
            + self.i_na
            + self.i_bna
            + self.i_naca
            + self.i_bca
            + self.i_pk
            + self.i_pca
    }
}

#[inline(always)]
pub(crate) fn currents<F: Real>(y: &[F; N_STATES], p: &CellParams<F>) -> Currents<F> {
    let one = F::c(1.0);
    let v = y[V];
    let rev = reversal(y);
    let u = v * F::c(F_RT); // V·F/(RT)

    let i_na = p.g_na * y[M] * y[M] * y[M] * y[H] * y[J] * (v - rev.e_na);

    let vk = v - rev.e_k;
    let alpha_k1 = F::c(0.1) * logistic_mul(vk - F::c(200.0), 0.06);
    let beta_k1 = (F::c(3.0) * (vk + F::c(100.0)).exp_mul(0.0002) + (vk - F::c(10.0)).exp_mul(0.1))
        * logistic_mul(vk, -0.5);
    let xk1_inf = alpha_k1 / (alpha_k1 + beta_k1);
    // sqrt(K_o/5.4) = 1 for the published K_o, but kept as in the CellML.
    let sqrt_ko = F::c((K_O / 5.4_f64).sqrt());
    let i_k1 = p.g_k1 * sqrt_ko * xk1_inf * vk;

    let i_to = p.g_to * y[R_GATE] * y[S] * vk;
    let i_kr = p.g_kr * sqrt_ko * y[XR1] * y[XR2] * vk;
    let i_ks = p.g_ks * y[XS] * y[XS] * (v - rev.e_ks);

    // I_CaL = g·d·f·f2·fCass·4F²/(RT)·(V−15)(¼Ca_ss·eˣ − Ca_o)/(eˣ−1), x = 2(V−15)F/(RT);
    // (V−15)/(eˣ−1) = (RT/2F)·B(x), so I_CaL = g·d·f·f2·fCass·2F·B(x)·(¼Ca_ss·eˣ − Ca_o).
    let x = F::c(2.0 * F_RT) * (v - F::c(15.0));
    let ex = (v - F::c(15.0)).exp_mul(2.0 * F_RT);
    let i_cal = p.g_cal_2f
        * y[D]
        * y[FG]
        * y[F2]
        * y[FCASS]
        * bernoulli(x, ex)
        * (F::c(0.25) * y[CA_SS] * ex - F::c(CA_O));

    // e^(−u) is shared by I_NaCa (e^((γ−1)u) = e^(γu)·e^(−u)) and I_NaK.
    let e_mu = u.exp_mul(-1.0);
    let e_gu = u.exp_mul(GAMMA_NACA);
    let e_g1u = e_gu * e_mu;
    let na3 = y[NA_I] * y[NA_I] * y[NA_I];
    let i_naca = p.k_naca
        * (e_gu * na3 * F::c(CA_O) - e_g1u * F::c(NA_O * NA_O * NA_O * ALPHA_NACA) * y[CA_I])
        / (F::c((KM_NAI * KM_NAI * KM_NAI + NA_O * NA_O * NA_O) * (KM_CA + CA_O))
            * (one + F::c(K_SAT) * e_g1u));

    let i_nak = p.p_nak_ko * y[NA_I]
        / ((y[NA_I] + F::c(K_MNA)) * (one + F::c(0.1245) * u.exp_mul(-0.1) + F::c(0.0353) * e_mu));

    let i_pca = p.g_pca * y[CA_I] / (y[CA_I] + F::c(K_PCA));
    let i_pk = p.g_pk * vk * logistic_mul(F::c(25.0) - v, 1.0 / 5.98);
    let i_bna = p.g_bna * (v - rev.e_na);
    let i_bca = p.g_bca * (v - rev.e_ca);

    let ca_i = y[CA_I];
    let ca_ss = y[CA_SS];
    let ca_sr = y[CA_SR];
    let i_leak = F::c(V_LEAK) * (ca_sr - ca_i);
    // Vmax/(1 + K²/Ca²) = Vmax·Ca²/(Ca² + K²): one division instead of two.
    let ca_i2 = ca_i * ca_i;
    let i_up = F::c(VMAX_UP) * ca_i2 / (ca_i2 + F::c(K_UP * K_UP));
    let kcasr = kcasr(ca_sr);
    // O = k1·Ca_ss²·R′/(k3 + k1·Ca_ss²) with k1 = k1′/kcasr, multiplied through by kcasr.
    let k1p_ca2 = F::c(K1_PRIME) * ca_ss * ca_ss;
    let open = k1p_ca2 * y[R_PRIME] / (F::c(K3) * kcasr + k1p_ca2);
    let i_rel = F::c(V_REL) * open * (ca_sr - ca_ss);
    let i_xfer = F::c(V_XFER) * (ca_ss - ca_i);

    Currents {
        i_na,
        i_k1,
        i_to,
        i_kr,
        i_ks,
        i_cal,
        i_naca,
        i_nak,
        i_pca,
        i_pk,
        i_bna,
        i_bca,
        i_leak,
        i_up,
        i_rel,
        i_xfer,
    }
}

/// kcasr = max_sr − (max_sr − min_sr)/(1 + (EC/Ca_SR)²), as max − (max−min)·Ca²/(Ca² + EC²).
#[inline(always)]
fn kcasr<F: Real>(ca_sr: F) -> F {
    let ca2 = ca_sr * ca_sr;
    F::c(MAX_SR) - F::c(MAX_SR - MIN_SR) * ca2 / (ca2 + F::c(EC * EC))
}

/// Rapid-equilibrium buffering factor 1/(1 + B·K/(c+K)²) = (c+K)²/((c+K)² + B·K).
#[inline(always)]
fn buffer_factor<F: Real>(c: F, b: f64, k: f64) -> F {
    let ck = c + F::c(k);
    let ck2 = ck * ck;
    ck2 / (ck2 + F::c(b * k))
}

/// m gate: steady state m∞ and rate 1/τm (1/ms), as needed by Rush–Larsen.
///
/// τm = αm·βm with αm = 1/(1+a), βm = 0.1/(1+b) + 0.1/(1+c); its reciprocal is formed as one
/// quotient (1+a)(1+b)(1+c)/(0.1·(2+b+c)) instead of four divisions.
#[inline(always)]
pub(crate) fn m_gate<F: Real>(v: F, ve: &VExp<F>) -> (F, F) {
    let one = F::c(1.0);
    let a = ea::<F>(-12.0) * ve.n5; // e^((−60−V)/5)
    let b = ea::<F>(7.0) * ve.p5; // e^((V+35)/5)
    let c = (v - F::c(50.0)).exp_mul(1.0 / 200.0);
    let inv_tau = (one + a) * (one + b) * (one + c) / (F::c(0.1) * (F::c(2.0) + b + c));
    let l = logistic_mul(F::c(-56.86) - v, 1.0 / 9.03);
    (l * l, inv_tau)
}

/// Time derivatives of all 19 states (ms⁻¹ units of each state), given the currents.
///
/// `d[M]` is the plain (m∞ − m)/τm of the CellML; the integrators use Rush–Larsen for m
/// instead (see [`super::step_cell_f64`]). `i_stim` enters dV/dt and, as in these CellML files
/// (Chaste's convention: the stimulus is carried by K⁺ so that charge is conserved), dK_i/dt.
// Long: the 19 equations of the published model in its order, one statement each (checked
// line by line against the CellML); split, the gating and concentration updates would share
// a dozen intermediate currents and rates.
#[inline(always)]
pub(crate) fn derivatives<F: Real>(
    y: &[F; N_STATES],
    p: &CellParams<F>,
    c: &Currents<F>,
    i_stim: F,
) -> [F; N_STATES] {
    let one = F::c(1.0);
    let v = y[V];
    let mut d = [F::c(0.0); N_STATES];

    d[V] = -(c.i_ion() + i_stim);

    // Gates as (inf − g)/τ; where τ = 1/(α+β) we multiply by (α+β) instead of dividing.
    let ve = VExp::new(v);
    // 1/(1 + e^((−26−V)/7)) = p7/(p7 + e^(−26/7)).
    let xr1_inf = ve.p7 / (ve.p7 + ea::<F>(-26.0 / 7.0));
    // τ = 450/(1+a) · 6/(1+b): multiply by the reciprocal (1+a)(1+b)/2700, no division.
    let inv_tau_xr1 = (one + ea::<F>(-4.5) * ve.n10)
        * (one + (v + F::c(30.0)).exp_mul(1.0 / 11.5))
        * F::c(1.0 / 2700.0);
    d[XR1] = (xr1_inf - y[XR1]) * inv_tau_xr1;

    let xr2_inf = logistic_mul(v + F::c(88.0), 1.0 / 24.0);
    let inv_tau_xr2 =
        (one + ea::<F>(-3.0) * ve.n20) * (one + ea::<F>(-3.0) * ve.p20) * F::c(1.0 / 3.36);
    d[XR2] = (xr2_inf - y[XR2]) * inv_tau_xr2;

    let xs_inf = logistic_mul(F::c(-5.0) - v, 1.0 / 14.0);
    let alpha_xs = F::c(1400.0) / (one + (F::c(5.0) - v).exp_mul(1.0 / 6.0)).sqrt();
    let beta_xs = logistic_mul(v - F::c(35.0), 1.0 / 15.0);
    let tau_xs = alpha_xs * beta_xs + F::c(80.0);
    d[XS] = (xs_inf - y[XS]) / tau_xs;

    let (m_inf, inv_tau_m) = m_gate(v, &ve);
    d[M] = (m_inf - y[M]) * inv_tau_m;

    // h and j: piecewise in V < −40 mV; both sides are evaluated and selected.
    let low = v < F::c(-40.0);
    let hj = logistic_mul(v + F::c(71.55), 1.0 / 7.43);
    let hj_inf = hj * hj;
    let alpha_h_lo = F::c(0.057) * (v + F::c(80.0)).exp_mul(-1.0 / 6.8);
    let beta_h_lo = F::c(2.7) * v.exp_mul(0.079) + F::c(310_000.0) * v.exp_mul(0.3485);
    let beta_h_hi = F::c(0.77 / 0.13) * logistic_mul(v + F::c(10.66), -1.0 / 11.1);
    let rate_h = if low {
        alpha_h_lo + beta_h_lo
    } else {
        beta_h_hi
    };
    d[H] = (hj_inf - y[H]) * rate_h;

    let alpha_j_lo = (F::c(-25428.0) * v.exp_mul(0.2444) - F::c(6.948e-6) * v.exp_mul(-0.04391))
        * (v + F::c(37.78))
        * logistic_mul(v + F::c(79.23), 0.311);
    let beta_j_lo = F::c(0.02424) * v.exp_mul(-0.01052) * logistic_mul(v + F::c(40.14), -0.1378);
    let beta_j_hi = F::c(0.6) * v.exp_mul(0.057) * logistic_of(-3.2, ve.n10);
    let rate_j = if low {
        alpha_j_lo + beta_j_lo
    } else {
        beta_j_hi
    };
    d[J] = (hj_inf - y[J]) * rate_j;

    let d_inf = logistic_mul(F::c(-8.0) - v, 1.0 / 7.5);
    let alpha_d = F::c(1.4) * logistic_mul(F::c(-35.0) - v, 1.0 / 13.0) + F::c(0.25);
    let beta_d = F::c(1.4) * logistic_of(1.0, ve.p5);
    let gamma_d = logistic_of(2.5, ve.n20);
    d[D] = (d_inf - y[D]) / (alpha_d * beta_d + gamma_d);

    // e^((V+30)/10) is shared by τf and τf2.
    let l30 = logistic_of(3.0, ve.p10);
    let v27 = v + F::c(27.0);
    let f_inf = logistic_of(20.0 / 7.0, ve.p7);
    let tau_f = F::c(1102.5) * (v27 * v27).exp_mul(-1.0 / 225.0)
        + F::c(200.0) * logistic_of(1.3, ve.n10)
        + F::c(180.0) * l30
        + F::c(20.0);
    d[FG] = (f_inf - y[FG]) / tau_f;

    let f2_inf = F::c(0.67) * logistic_of(5.0, ve.p7) + F::c(0.33);
    let tau_f2 = F::c(562.0) * (v27 * v27).exp_mul(-1.0 / 240.0)
        + F::c(31.0) * logistic_of(2.5, ve.n10)
        + F::c(80.0) * l30;
    d[F2] = (f2_inf - y[F2]) / tau_f2;

    let cass_r = y[CA_SS] * F::c(1.0 / 0.05);
    let fcass_den = one / (one + cass_r * cass_r);
    let fcass_inf = F::c(0.6) * fcass_den + F::c(0.4);
    let tau_fcass = F::c(80.0) * fcass_den + F::c(2.0);
    d[FCASS] = (fcass_inf - y[FCASS]) / tau_fcass;

    let s_inf = F::c(1.0) / (F::c(1.0) + p.s_inf_scale * ve.p5);
    let vs = v + p.tau_s_b;
    let tau_s = p.tau_s_a * (-(vs * vs) * p.tau_s_inv_c).exp()
        + p.tau_s_d * logistic_of(-4.0, ve.p5)
        + p.tau_s_e;
    d[S] = (s_inf - y[S]) / tau_s;

    let r_inf = logistic_mul(F::c(20.0) - v, 1.0 / 6.0);
    let v40 = v + F::c(40.0);
    let tau_r = F::c(9.5) * (v40 * v40).exp_mul(-1.0 / 1800.0) + F::c(0.8);
    d[R_GATE] = (r_inf - y[R_GATE]) / tau_r;

    // Concentrations. Buffering factors are the rapid-equilibrium approximations of the CellML.
    let ca_i = y[CA_I];
    let ca_sr = y[CA_SR];
    let ca_ss = y[CA_SS];
    let bufc = buffer_factor(ca_i, BUF_C, K_BUF_C);
    let bufsr = buffer_factor(ca_sr, BUF_SR, K_BUF_SR);
    let bufss = buffer_factor(ca_ss, BUF_SS, K_BUF_SS);

    d[CA_I] = bufc
        * ((c.i_leak - c.i_up) * F::c(V_SR / V_C) + c.i_xfer
            - (c.i_bca + c.i_pca - F::c(2.0) * c.i_naca) * F::c(CM / (2.0 * V_C * FARADAY)));
    d[CA_SR] = bufsr * (c.i_up - (c.i_rel + c.i_leak));
    d[CA_SS] = bufss
        * (-c.i_cal * F::c(CUR_TO_CONC_SS) + c.i_rel * F::c(V_SR / V_SS)
            - c.i_xfer * F::c(V_C / V_SS));

    let k2 = F::c(K2_PRIME) * kcasr(ca_sr);
    d[R_PRIME] = -k2 * ca_ss * y[R_PRIME] + F::c(K4) * (one - y[R_PRIME]);

    d[NA_I] =
        -(c.i_na + c.i_bna + F::c(3.0) * c.i_nak + F::c(3.0) * c.i_naca) * F::c(CUR_TO_CONC_C);
    d[K_I] = -(c.i_k1 + c.i_to + c.i_kr + c.i_ks + c.i_pk + i_stim - F::c(2.0) * c.i_nak)
        * F::c(CUR_TO_CONC_C);
    d
}

/// One step of the paper's scheme: Rush–Larsen on m, forward Euler on everything else.
#[inline(always)]
pub(crate) fn step<F: Real>(y: &mut [F; N_STATES], p: &CellParams<F>, i_stim: F, dt: F) {
    step_impl::<F, false>(y, p, i_stim, dt, &mut [F::c(0.0); 3]);
}

/// [`step`] with compensated (Kahan/Fast2Sum) updates of Na_i, K_i and Ca_SR: `comp` carries
/// the rounding error of the previous update of each, so increments smaller than an ulp of the
/// concentration accumulate instead of being rounded away (see the f32 notes in `super`).
#[inline(always)]
pub(crate) fn step_compensated<F: Real>(
    y: &mut [F; N_STATES],
    p: &CellParams<F>,
    i_stim: F,
    dt: F,
    comp: &mut [F; 3],
) {
    step_impl::<F, true>(y, p, i_stim, dt, comp);
}

#[inline(always)]
fn step_impl<F: Real, const COMPENSATE: bool>(
    y: &mut [F; N_STATES],
    p: &CellParams<F>,
    i_stim: F,
    dt: F,
    comp: &mut [F; 3],
) {
    let c = currents(y, p);
    let d = derivatives(y, p, &c, i_stim);
    let (m_inf, inv_tau_m) = m_gate(y[V], &VExp::new(y[V]));
    let m_new = m_inf + (y[M] - m_inf) * (-dt * inv_tau_m).exp();
    let old = *y;
    for (yk, dk) in y.iter_mut().zip(d.iter()) {
        *yk = *yk + dt * *dk;
    }
    y[M] = m_new;
    if COMPENSATE {
        for (j, k) in [NA_I, K_I, CA_SR].into_iter().enumerate() {
            // Fast2Sum: |old| ≫ |inc| for a concentration, so `inc − (sum − old)` is the exact
            // rounding error of `sum` (no reassociation: Rust does not use fast-math).
            let inc = dt * d[k] + comp[j];
            let sum = old[k] + inc;
            comp[j] = (inc - (sum - old[k])).canonical_nan();
            y[k] = sum;
        }
    }
    // A cell that has left the model's range (NaN) has the same bits on every host.
    for yk in y.iter_mut() {
        *yk = yk.canonical_nan();
    }
}
