//! The server's stdio transport, in place of `lsp_server::Connection::stdio`, whose
//! reader trusts `Content-Length` (it allocates what the header announces before a
//! byte of the body arrives, and a header of 4 GiB aborts the process) and ends the
//! session at the first message that is not JSON.
//!
//! Here a message is at most [`MAX_MESSAGE`] bytes; its body is read as it arrives
//! (memory grows with the bytes received, never ahead of them). A stream that cannot
//! be framed any more (a message over the limit, a header line over
//! [`MAX_HEADER_LINE`] bytes, a missing or unreadable `Content-Length`) gets an error
//! reply and ends the session: the reader stops, the main loop sees the connection
//! close and the server exits. A message that is framed but not a JSON-RPC message
//! (invalid UTF-8, invalid JSON such as a lone surrogate `\ud800`, a request whose
//! fields have the wrong types) gets an error reply (`-32700` parse error, `-32600`
//! invalid request) and a log line, and the session goes on.

use std::io::{self, BufRead, Read, Write};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{bounded, select, unbounded, Receiver, Sender};
use lsp_server::{Connection, ErrorCode, Message, RequestId};
use serde_json::{json, Value};

/// The largest message read: 64 MiB.
pub const MAX_MESSAGE: u64 = 64 << 20;
/// The longest header line read, and the most header lines of one message.
pub const MAX_HEADER_LINE: u64 = 8 << 10;
const MAX_HEADER_LINES: usize = 32;

/// A message that could not be read as one, and what to answer.
#[derive(Debug, PartialEq)]
pub struct Rejected {
    /// The id to answer with (`None`: `null`).
    pub id: Option<RequestId>,
    pub code: i32,
    pub message: String,
}

/// What [`read_frame`] found.
#[derive(Debug, PartialEq)]
pub enum Frame {
    /// The body of one message.
    Body(Vec<u8>),
    /// The end of the input (also in the middle of a message).
    End,
    /// The stream cannot be framed any more: answer and stop.
    Fatal(Rejected),
}

fn fatal(message: String) -> Frame {
    Frame::Fatal(Rejected {
        id: None,
        code: ErrorCode::InvalidRequest as i32,
        message,
    })
}

/// Reads one message's headers and body, within the limits.
pub fn read_frame(input: &mut impl BufRead, max: u64) -> io::Result<Frame> {
    let mut length: Option<u64> = None;
    let mut line = Vec::new();
    let mut lines = 0;
    loop {
        line.clear();
        let n = input
            .by_ref()
            .take(MAX_HEADER_LINE + 1)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(Frame::End);
        }
        if line.last() != Some(&b'\n') {
            if n as u64 > MAX_HEADER_LINE {
                return Ok(fatal(format!(
                    "a header line is longer than {MAX_HEADER_LINE} bytes; closing the \
                     connection"
                )));
            }
            return Ok(Frame::End);
        }
        lines += 1;
        if lines > MAX_HEADER_LINES {
            return Ok(fatal(format!(
                "more than {MAX_HEADER_LINES} header lines; closing the connection"
            )));
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            // Blank lines before the first header (a stray CRLF) are skipped.
            if length.is_some() || lines > 1 {
                break;
            }
            lines = 0;
            continue;
        }
        let Some((name, value)) = text.split_once(':') else {
            return Ok(fatal(format!(
                "malformed header {text:?}; closing the connection"
            )));
        };
        if name.trim().eq_ignore_ascii_case("Content-Length") {
            match value.trim().parse::<u64>() {
                Ok(n) => length = Some(n),
                Err(_) => {
                    return Ok(fatal(format!(
                        "Content-Length {:?} is not a number of bytes; closing the connection",
                        value.trim()
                    )))
                }
            }
        }
    }
    let Some(length) = length else {
        return Ok(fatal(
            "a message without Content-Length; closing the connection".into(),
        ));
    };
    if length > max {
        return Ok(fatal(format!(
            "a message of {length} bytes is over the limit of {max} bytes ({} MiB); \
             closing the connection",
            max >> 20
        )));
    }
    // Grows with the bytes that arrive, not with what the header announces.
    let mut body = Vec::new();
    input.by_ref().take(length).read_to_end(&mut body)?;
    if (body.len() as u64) < length {
        return Ok(Frame::End);
    }
    Ok(Frame::Body(body))
}

/// The id of a JSON-RPC message that is no message lsp_server reads: answered with
/// it when it is a number or a string.
fn id_of(value: &Value) -> Option<RequestId> {
    match value.get("id")? {
        Value::Number(n) => n
            .as_i64()
            .and_then(|n| i32::try_from(n).ok())
            .map(Into::into),
        Value::String(s) => Some(s.clone().into()),
        _ => None,
    }
}

/// A message from its body; `Err` with the reply when it is none. A message that
/// is JSON but not a request (no `id`) is dropped: `Err` with `None`.
pub fn decode(body: &[u8]) -> Result<Message, Option<Rejected>> {
    let parse_error = |message: String| {
        Some(Rejected {
            id: None,
            code: ErrorCode::ParseError as i32,
            message,
        })
    };
    let text = match std::str::from_utf8(body) {
        Ok(t) => t,
        Err(e) => return Err(parse_error(format!("the message is not UTF-8: {e}"))),
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return Err(parse_error(format!("the message is not JSON: {e}"))),
    };
    let id = id_of(&value);
    let has_id = value.get("id").is_some();
    match serde_json::from_value::<Message>(value) {
        Ok(m) => Ok(m),
        Err(e) if has_id => Err(Some(Rejected {
            id,
            code: ErrorCode::InvalidRequest as i32,
            message: format!("not a JSON-RPC request: {e}"),
        })),
        Err(_) => Err(None),
    }
}

/// One message in the base protocol's framing.
fn write_raw(out: &mut impl Write, value: &Value) -> io::Result<()> {
    let body = value.to_string();
    write!(out, "Content-Length: {}\r\n\r\n{body}", body.len())?;
    out.flush()
}

fn error_reply(r: &Rejected) -> Value {
    let id = match &r.id {
        Some(id) => serde_json::to_value(id).unwrap_or(Value::Null),
        None => Value::Null,
    };
    json!({"jsonrpc": "2.0", "id": id,
           "error": {"code": r.code, "message": format!("msgaudit: {}", r.message)}})
}

fn log_line(message: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": "window/logMessage",
           "params": {"type": 2, "message": format!("msgaudit: {message}")}})
}

/// How long after reading `exit` the process ends even when the main loop has not
/// taken it: a client that stops reading the server's output blocks the writer,
/// then the main loop on its next reply, and `exit` must still end the process
/// within a second.
pub const EXIT_GRACE: Duration = Duration::from_millis(500);
/// The most bytes of messages read ahead of the main loop. The reader goes on
/// reading while the main loop is blocked (so that it sees `exit`), up to this
/// much; past it, it waits.
pub const READ_AHEAD: u64 = 2 * MAX_MESSAGE;
/// The error replies and log lines the reader hands the writer that it has not
/// written yet; more are dropped (and said on standard error).
const RAW_QUEUE: usize = 64;

/// The threads of the stdio transport.
pub struct Transport {
    reader: JoinHandle<Result<(), String>>,
    writer: JoinHandle<()>,
}

impl Transport {
    /// Waits for the writer to write what it was given (it ends when the
    /// connection's sender is dropped), and returns why the reader stopped, if it
    /// stopped on bad input. The reader is not waited for: after `exit` it has
    /// stopped, and otherwise it may be blocked on standard input. A writer blocked
    /// on an output nobody reads is not waited for either: after `exit` the reader
    /// ends the process ([`EXIT_GRACE`]).
    pub fn finish(self) -> Result<(), String> {
        let _ = self.writer.join();
        if self.reader.is_finished() {
            self.reader.join().unwrap_or(Ok(()))
        } else {
            Ok(())
        }
    }
}

/// Bytes read ahead of the main loop ([`READ_AHEAD`]).
#[derive(Default)]
struct Ahead {
    bytes: Mutex<u64>,
    taken: Condvar,
}

impl Ahead {
    /// Waits until `n` more bytes fit (one message always does).
    fn reserve(&self, n: u64) {
        let mut held = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
        while *held > 0 && *held + n > READ_AHEAD {
            held = self.taken.wait(held).unwrap_or_else(|e| e.into_inner());
        }
        *held += n;
    }

    fn release(&self, n: u64) {
        let mut held = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
        *held = held.saturating_sub(n);
        self.taken.notify_all();
    }
}

/// A connection over standard input and output. Three threads: the reader frames
/// and decodes messages as they arrive and queues them ([`READ_AHEAD`]), a
/// forwarder hands them to the main loop one at a time, and the writer alone
/// writes standard output (the main loop's messages, and the reader's error
/// replies and log lines), so that a blocked output blocks neither reading nor
/// `exit`.
pub fn stdio() -> (Connection, Transport) {
    let (writer_tx, writer_rx) = bounded::<Message>(0);
    let (raw_tx, raw_rx) = bounded::<Value>(RAW_QUEUE);
    let (reader_tx, reader_rx) = bounded::<Message>(0);
    let (queue_tx, queue_rx) = unbounded::<(Message, u64)>();
    let ahead = Arc::new(Ahead::default());
    let writer = std::thread::Builder::new()
        .name("msgaudit-lsp-writer".into())
        .spawn(move || write_loop(writer_rx, raw_rx))
        .expect("cannot start a thread");
    let forwarded = ahead.clone();
    std::thread::Builder::new()
        .name("msgaudit-lsp-forwarder".into())
        .spawn(move || {
            for (msg, n) in queue_rx {
                let sent = reader_tx.send(msg);
                forwarded.release(n);
                if sent.is_err() {
                    return;
                }
            }
        })
        .expect("cannot start a thread");
    let reader = std::thread::Builder::new()
        .name("msgaudit-lsp-reader".into())
        .spawn(move || read_loop(&queue_tx, &raw_tx, &ahead))
        .expect("cannot start a thread");
    (
        Connection {
            sender: writer_tx,
            receiver: reader_rx,
        },
        Transport { reader, writer },
    )
}

fn write_loop(rx: Receiver<Message>, raw: Receiver<Value>) {
    let stdout = io::stdout();
    let mut raw = Some(raw);
    loop {
        let written = match &raw {
            Some(r) => select! {
                recv(rx) -> msg => match msg {
                    Ok(msg) => msg.write(&mut stdout.lock()),
                    Err(_) => {
                        // The main loop is done: what the reader queued last
                        // (a fatal frame's reply) still goes out.
                        for v in r.try_iter() {
                            if write_raw(&mut stdout.lock(), &v).is_err() {
                                return;
                            }
                        }
                        return;
                    }
                },
                recv(r) -> v => match v {
                    Ok(v) => write_raw(&mut stdout.lock(), &v),
                    Err(_) => {
                        raw = None;
                        Ok(())
                    }
                },
            },
            None => match rx.recv() {
                Ok(msg) => msg.write(&mut stdout.lock()),
                Err(_) => return,
            },
        };
        if written.is_err() {
            return;
        }
    }
}

/// Hands `value` to the writer unless its queue is full (then it is said on
/// standard error only).
fn to_writer(raw: &Sender<Value>, value: Value) {
    if raw.try_send(value).is_err() {
        let _ = writeln!(
            io::stderr(),
            "msgaudit server: output blocked; a reply was dropped"
        );
    }
}

fn read_loop(
    queue: &Sender<(Message, u64)>,
    raw: &Sender<Value>,
    ahead: &Ahead,
) -> Result<(), String> {
    let stdin = io::stdin();
    let mut input = stdin.lock();
    loop {
        let body = match read_frame(&mut input, MAX_MESSAGE) {
            Ok(Frame::Body(body)) => body,
            Ok(Frame::End) | Err(_) => return Ok(()),
            Ok(Frame::Fatal(r)) => {
                to_writer(raw, error_reply(&r));
                return Err(r.message);
            }
        };
        let n = body.len() as u64;
        match decode(&body) {
            Ok(msg) => {
                drop(body);
                let exit = matches!(&msg, Message::Notification(n) if n.method == "exit");
                ahead.reserve(n);
                if queue.send((msg, n)).is_err() {
                    return Ok(());
                }
                if exit {
                    // The main loop ends the process when it takes `exit`; when it
                    // is blocked (on an output nobody reads), this does.
                    std::thread::sleep(EXIT_GRACE);
                    std::process::exit(0);
                }
            }
            Err(reply) => {
                let what = match &reply {
                    Some(r) => r.message.clone(),
                    None => "dropped a notification that is no JSON-RPC message".into(),
                };
                let _ = writeln!(io::stderr(), "msgaudit server: {what}");
                if let Some(r) = reply {
                    to_writer(raw, error_reply(&r));
                }
                to_writer(raw, log_line(&what));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(bytes: &[u8]) -> Frame {
        read_frame(&mut io::Cursor::new(bytes.to_vec()), 100).unwrap()
    }

    #[test]
    fn frames_are_read_within_the_limit() {
        assert_eq!(
            frame(b"Content-Length: 2\r\n\r\n{}"),
            Frame::Body(b"{}".to_vec())
        );
        // Other headers, any case, bare LF.
        assert_eq!(
            frame(b"content-type: x\ncontent-length:2\n\n{}"),
            Frame::Body(b"{}".to_vec())
        );
        assert_eq!(frame(b"Content-Length: 5\r\n\r\n{}"), Frame::End);
        assert_eq!(frame(b""), Frame::End);
        for bad in [
            &b"Content-Length: 101\r\n\r\n"[..],
            b"Content-Length: 4294967296\r\n\r\n",
            b"Content-Length: 99999999999999999999999\r\n\r\n",
            b"Content-Length: -1\r\n\r\n",
            b"Content-Type: x\r\n\r\n{}",
            b"nonsense\r\n\r\n",
        ] {
            assert!(matches!(frame(bad), Frame::Fatal(_)), "{bad:?}");
        }
        let long = format!("X-Long: {}\r\n", "a".repeat(MAX_HEADER_LINE as usize));
        assert!(matches!(frame(long.as_bytes()), Frame::Fatal(_)));
    }

    #[test]
    fn bodies_that_are_no_message_get_the_json_rpc_error() {
        let code = |body: &[u8]| decode(body).unwrap_err().map(|r| (r.id, r.code));
        let parse = Some((None, ErrorCode::ParseError as i32));
        assert_eq!(code(b"{\"jsonrpc\": \"2.0\", \"id\": 1,"), parse);
        assert_eq!(code(b"\xff{}"), parse);
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","method":"x","params":{"t":"\ud800"}}"#),
            parse
        );
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":3,"method":5}"#),
            Some((Some(3.into()), ErrorCode::InvalidRequest as i32))
        );
        assert_eq!(code(br#"{"jsonrpc":"2.0","methd":5}"#), None);
        assert!(decode(br#"{"jsonrpc":"2.0","id":3,"method":"m","params":5}"#).is_ok());
    }
}
