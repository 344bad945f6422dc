//! ten Tusscher–Panfilov 2006 ventricular cell model.
