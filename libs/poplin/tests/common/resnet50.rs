//! ResNet-50's distinct convolution layers, for the planner test and the bench.

/// (input channels, output channels, field, kernel, stride, padding) of each distinct
/// convolution layer of ResNet-50 (square fields and kernels).
pub const RESNET50_LAYERS: [(usize, usize, usize, usize, usize, usize); 11] = [
    (3, 64, 224, 7, 2, 3),
    (64, 64, 56, 1, 1, 0),
    (64, 64, 56, 3, 1, 1),
    (64, 256, 56, 1, 1, 0),
    (256, 128, 56, 1, 1, 0),
    (128, 128, 28, 3, 1, 1),
    (512, 256, 28, 1, 1, 0),
    (256, 256, 14, 3, 1, 1),
    (1024, 512, 14, 1, 1, 0),
    (512, 512, 7, 3, 1, 1),
    (512, 2048, 7, 1, 1, 0),
];
