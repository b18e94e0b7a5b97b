// One file of this crate does not parse; the other is still analyzed.
mod handler;

fn main() {
    let x = ;
}
