//! gRPC without generated code: one bytes-in, bytes-out method, its
//! message framed as gRPC frames every message over HTTP/2 (a compressed
//! flag and a big-endian length before the bytes), its outcome in the
//! `grpc-status` trailer.

use bytes::{BufMut, Bytes, BytesMut};

/// The method's path: any gRPC client can call it with raw bytes.
pub const METHOD: &str = "/herdsim.Herdsim/Call";

/// The status codes the server answers with (gRPC's numbering).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok = 0,
    /// A compressed message (the server does not decompress).
    Unimplemented = 12,
    /// The attempt failed (the model's failure, an outage).
    Unavailable = 14,
    /// The server refused it (a full queue, shedding).
    ResourceExhausted = 8,
    /// Not the server's method, or a malformed frame.
    InvalidArgument = 3,
}

impl Status {
    pub fn code(self) -> u8 {
        self as u8
    }
}

/// True if the request's content type says gRPC.
pub fn is_grpc(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|t| t.starts_with("application/grpc"))
}

/// The message of a request body holding one uncompressed frame; the
/// status to answer with otherwise.
pub fn message_of(body: &[u8]) -> Result<Bytes, Status> {
    if body.len() < 5 {
        return Err(Status::InvalidArgument);
    }
    if body[0] != 0 {
        return Err(Status::Unimplemented);
    }
    let length = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
    if body.len() != 5 + length {
        return Err(Status::InvalidArgument);
    }
    Ok(Bytes::copy_from_slice(&body[5..]))
}

/// `message` as one uncompressed frame.
pub fn frame(message: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(5 + message.len());
    out.put_u8(0);
    out.put_u32(message.len() as u32);
    out.put_slice(message);
    out.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_reads_back_and_bad_frames_are_named() {
        let framed = frame(b"hello");
        assert_eq!(&framed[..5], &[0, 0, 0, 0, 5]);
        assert_eq!(message_of(&framed).unwrap(), Bytes::from_static(b"hello"));
        assert_eq!(message_of(&framed[..7]), Err(Status::InvalidArgument));
        let mut compressed = framed.to_vec();
        compressed[0] = 1;
        assert_eq!(message_of(&compressed), Err(Status::Unimplemented));
        assert_eq!(message_of(b""), Err(Status::InvalidArgument));
    }
}
