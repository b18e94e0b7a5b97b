/// The service's own in-memory stand-in, named like the client.
pub struct Producer {
    pub sent: std::sync::Mutex<Vec<String>>,
}

impl Producer {
    pub fn send(&self, line: &str) -> Result<(), String> {
        self.sent.lock().unwrap().push(line.to_owned());
        Ok(())
    }
}
