//! codelets
