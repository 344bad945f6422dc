//! Prints the validation table of `docs/cycle-model.md`: every modelled figure beside the
//! published one, with its ratio and check.
//!
//! Run: `cargo bench -p cycle-validation --bench table`

fn main() {
    let rows = cycle_validation::table();
    print!("{}", cycle_validation::markdown(&rows));
    let failing = rows.iter().filter(|r| !r.passes()).count();
    println!("\n{} rows, {failing} outside their check", rows.len());
}
