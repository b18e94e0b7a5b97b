use rdkafka::consumer::StreamConsumer;
fn f(c: &StreamConsumer) { let s = "ÿþ"; }
