fn main() {
    println!("2 + 3 = {}", calc::add(2, 3));
}
