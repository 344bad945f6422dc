//! Convolutions, in the style of poplibs' `poplin::convolution`: parameters and passes
//! ([`mod@params`]), the planner ([`mod@plan`]), the `ConvPartial` codelets
//! ([`mod@codelets`]) and the graph builder ([`mod@build`]).
//!
//! Every pass of training (forward, input gradient, weight update) is one canonical
//! convolution ([`PassShape`]): the input gradient convolves the output gradient, dilated by
//! the stride, with the flipped weights; the weight update convolves the input, batch and
//! channels swapped, with the output gradient as the kernel. One planner and one codelet
//! family serve the three.

pub mod build;
pub mod codelets;
pub mod params;
pub mod plan;

pub use build::{
    convolution, convolution_input_gradient, convolution_weight_gradient, create_conv_input,
    create_conv_output_gradient, create_conv_weights, ConvError,
};
pub use params::{ConvParams, ConvPass, ConvPlanError, ConvRule, PassShape};
pub use plan::{plan_convolution, ConvOptions, ConvPlan};
