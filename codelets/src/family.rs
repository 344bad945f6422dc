//! The op families of the codelets, as their registered names begin (`Add<float>`,
//! `AddInPlace<half>`, `ReduceSum<int>`): what the vertices, their cycle estimates
//! ([`crate::cycles`]) and the graph-building helpers (the `popops` crate) all name.

/// Binary element-wise operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
}

impl BinaryOp {
    /// The codelet name stem (`"Add"`).
    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "Add",
            BinaryOp::Sub => "Sub",
            BinaryOp::Mul => "Mul",
            BinaryOp::Div => "Div",
            BinaryOp::Max => "Max",
            BinaryOp::Min => "Min",
        }
    }
}

/// Unary element-wise operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Abs,
    Square,
    Sqrt,
    Exp,
}

impl UnaryOp {
    /// The codelet name stem (`"Neg"`).
    pub fn name(self) -> &'static str {
        match self {
            UnaryOp::Neg => "Neg",
            UnaryOp::Abs => "Abs",
            UnaryOp::Square => "Square",
            UnaryOp::Sqrt => "Sqrt",
            UnaryOp::Exp => "Exp",
        }
    }
}

/// Reductions of a whole tensor to one element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceOp {
    Sum,
    Max,
    Min,
}

impl ReduceOp {
    /// The codelet name stem (`"ReduceSum"`).
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "ReduceSum",
            ReduceOp::Max => "ReduceMax",
            ReduceOp::Min => "ReduceMin",
        }
    }
}
