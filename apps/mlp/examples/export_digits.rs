//! Exports the UCI digits' CSV files (`data/digits/optdigits.tra`, `optdigits.tes`) into the
//! `.npy` files `mlp train` reads, beside them: `cargo run -p mlp --example export_digits`.
//! Each file is checked (64 counts in 0..16 and a class per row, the published class counts)
//! and written atomically. `data/digits/README.md` describes them.

fn main() -> std::process::ExitCode {
    let dir = mlp::digits::dir();
    match mlp::digits::export(&dir) {
        Ok((train, test)) => {
            for p in mlp::digits::npy_paths(&dir) {
                println!("wrote {}", p.display());
            }
            println!("{train} training and {test} test samples");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
