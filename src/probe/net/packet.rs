//! The datagram `latscope net` sends and reflects: a fixed header (magic, total length,
//! sequence number, send time) then filler up to the chosen size. The reflector answers
//! only requests whose header checks out, so stray traffic is never echoed, and marks its
//! answer as a reply, which no reflector answers: two reflectors (or a reflector and an
//! echo service, or a reflector and itself) cannot keep one datagram going (issue 12).

/// Identifies latscope probe requests (and the header layout's version).
pub const MAGIC: [u8; 4] = *b"LSN1";
/// Identifies a reflector's reply to a request (same layout).
pub const REPLY_MAGIC: [u8; 4] = *b"LSR1";
/// Header bytes: magic 4, total length 4, sequence 8, send time 8 (little-endian).
pub const HEADER_BYTES: usize = 24;
/// The smallest payload: the header alone.
pub const MIN_SIZE: usize = HEADER_BYTES;
/// The largest UDP payload over IPv4.
pub const MAX_SIZE: usize = 65_507;

/// What a valid datagram says about itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub seq: u64,
    /// CLOCK_MONOTONIC of the sender when it sent the datagram, ns.
    pub send_ns: u64,
}

/// A datagram of `size` bytes with magic, length and a filler pattern written; `stamp`
/// fills in sequence and send time before each send.
pub fn new_datagram(size: usize) -> Vec<u8> {
    let mut buf: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
    buf[..4].copy_from_slice(&MAGIC);
    buf[4..8].copy_from_slice(&(size as u32).to_le_bytes());
    buf
}

/// Writes sequence number and send time into a datagram made by `new_datagram`.
#[inline(always)]
pub fn stamp(buf: &mut [u8], seq: u64, send_ns: u64) {
    buf[8..16].copy_from_slice(&seq.to_le_bytes());
    buf[16..24].copy_from_slice(&send_ns.to_le_bytes());
}

/// Turns a request into the reply the reflector sends back (only the magic changes).
#[inline(always)]
pub fn mark_reply(datagram: &mut [u8]) {
    datagram[..4].copy_from_slice(&REPLY_MAGIC);
}

/// The header of a request, or None when it is not a well-formed latscope request (too
/// short, wrong magic, a reply, or a length field that disagrees with its real length).
#[inline]
pub fn parse(datagram: &[u8]) -> Option<Header> {
    parse_with_magic(datagram, |m| m == MAGIC)
}

/// The header of a reply, as `parse`; an unmarked echo (an older reflector) is accepted.
#[inline]
pub fn parse_reply(datagram: &[u8]) -> Option<Header> {
    parse_with_magic(datagram, |m| m == REPLY_MAGIC || m == MAGIC)
}

#[inline(always)]
fn parse_with_magic(datagram: &[u8], magic_ok: impl Fn(&[u8]) -> bool) -> Option<Header> {
    if datagram.len() < HEADER_BYTES || !magic_ok(&datagram[..4]) {
        return None;
    }
    let field = |r: std::ops::Range<usize>| -> u64 {
        let mut b = [0u8; 8];
        b[..r.len()].copy_from_slice(&datagram[r]);
        u64::from_le_bytes(b)
    };
    if field(4..8) != datagram.len() as u64 {
        return None;
    }
    Some(Header {
        seq: field(8..16),
        send_ns: field(16..24),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_malformed() {
        let mut d = new_datagram(64);
        stamp(&mut d, 7, 123_456);
        assert_eq!(
            parse(&d),
            Some(Header {
                seq: 7,
                send_ns: 123_456
            })
        );
        assert_eq!(parse(&d[..63]), None, "truncated");
        assert_eq!(parse(&d[..10]), None, "shorter than a header");
        let mut bad = d.clone();
        bad[0] = b'X';
        assert_eq!(parse(&bad), None, "wrong magic");
        assert_eq!(parse(b""), None);
        let mut longer = d.clone();
        longer.push(0);
        assert_eq!(parse(&longer), None, "length field disagrees");
    }

    #[test]
    fn a_reply_is_never_a_request() {
        let mut d = new_datagram(64);
        stamp(&mut d, 9, 1);
        let request = parse(&d);
        mark_reply(&mut d);
        assert_eq!(parse(&d), None, "a reflector must not answer a reply");
        assert_eq!(parse_reply(&d), request);
        assert_eq!(parse_reply(&d[..63]), None);
    }
}
