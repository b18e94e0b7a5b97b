// One file of this crate does not parse (it names sqlx, so the prefilter keeps it); the other is still analyzed.
mod handler;

fn main() {
    let x = ;
}
