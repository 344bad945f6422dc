fn main() {
    println!("cardiac: under construction");
}
