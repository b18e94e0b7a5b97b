// One file of this crate does not parse (it names sqlx where it is parsed, in the body below); the other is still analyzed.
mod handler;

fn main(_pool: sqlx::PgPool) {
    let x = ;
}
