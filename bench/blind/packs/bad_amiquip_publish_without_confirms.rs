// MA008 (amiquip): audit events are published on a channel never put in confirm mode; a
// message the broker drops (no route to a durable queue, a node failing over) is lost unseen.
use amiquip::{Connection, Exchange, Publish};

pub fn publish_audit(url: &str, events: &[Vec<u8>]) -> anyhow::Result<()> {
    let mut connection = Connection::insecure_open(url)?;
    let channel = connection.open_channel(None)?;
    let exchange = Exchange::direct(&channel);
    for body in events {
        exchange.publish(Publish::new(body, "audit"))?; //~ MA008
    }
    connection.close()?;
    Ok(())
}
