//! Shared by the importer's tests.
#![allow(dead_code)]

pub mod conformance;
pub mod models;
