//! Credentials: bearer tokens (stored only as SHA-256 hashes), webhook signing secrets (stored encrypted
//! with the data directory's master key).
//!
//! Tokens carry 256 random bits, so an unsalted SHA-256 is a sound at-rest form: there is nothing to
//! brute-force, and looking a token up by its hash means no stored token is ever compared with what a
//! client sent (the database compares hashes, so timing reveals nothing about any token). Signing secrets must be recoverable to sign with, so they are sealed with
//! XChaCha20-Poly1305 instead; a copied database alone does not reveal them.
//!
//! A [`Keyring`] also authenticates (`tag`, `verify_tag`): HMAC-SHA256 under a key derived from its own
//! for one purpose, so the key that seals is never itself a MAC key, and a tag made for one purpose never
//! verifies for another.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::{Digest, Sha256};

const TOKEN_PREFIX: &str = "sbt_";
const SECRET_PREFIX: &str = "whsec_";

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    rand::rngs::OsRng.fill_bytes(&mut b);
    b
}

/// A new bearer token: `sbt_` and 43 URL-safe characters.
pub fn new_bearer_token() -> String {
    format!("{TOKEN_PREFIX}{}", URL_SAFE_NO_PAD.encode(random_bytes::<32>()))
}

/// A new random token for a link or a cookie: 43 URL-safe characters (256 bits).
pub fn new_url_token() -> String {
    URL_SAFE_NO_PAD.encode(random_bytes::<32>())
}

/// A new conversation token: `cvt_` and 43 URL-safe characters (256 bits), given once with a new
/// conversation's first answer and stored only as its SHA-256 ([`token_hash`]).
pub fn new_conversation_token() -> String {
    format!("cvt_{}", URL_SAFE_NO_PAD.encode(random_bytes::<32>()))
}

/// A new Standard Webhooks secret: `whsec_` and base64 of 32 random bytes.
pub fn new_webhook_secret() -> String {
    format!("{SECRET_PREFIX}{}", STANDARD.encode(random_bytes::<32>()))
}

/// A new key for a site export (`sitebot site export`): base64 of 32 random bytes, a [`Keyring`] key.
pub fn new_export_key() -> String {
    STANDARD.encode(random_bytes::<32>())
}

/// The stored form of a bearer token.
pub fn token_hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

#[derive(Debug, thiserror::Error)]
pub enum KeyringError {
    #[error("the master key must be base64 of 32 bytes")]
    BadKey,
    #[error("cannot read or create the master key at {path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("a stored secret does not decrypt with this master key (was the data directory's master.key replaced?)")]
    Decrypt,
}

/// Seals and opens secrets at rest, and authenticates data with keys derived from its own.
#[derive(Clone)]
pub struct Keyring {
    cipher: XChaCha20Poly1305,
    /// Kept only to derive MAC keys from (`mac_for`).
    key: [u8; 32],
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Keyring([redacted])")
    }
}

impl Keyring {
    pub fn from_bytes(key: &[u8; 32]) -> Self {
        Self { cipher: XChaCha20Poly1305::new(key.into()), key: *key }
    }

    pub fn from_base64(b64: &str) -> Result<Self, KeyringError> {
        let bytes = STANDARD.decode(b64.trim()).map_err(|_| KeyringError::BadKey)?;
        let key: [u8; 32] = bytes.try_into().map_err(|_| KeyringError::BadKey)?;
        Ok(Self::from_bytes(&key))
    }

    /// Reads `master.key` from the data directory, creating it (mode 0600) on first use. Two processes
    /// racing to create it agree: `create_new` lets exactly one write, the other reads its key.
    pub fn load_or_create(path: &Path) -> Result<Self, KeyringError> {
        let io = |source| KeyringError::Io { path: path.display().to_string(), source };
        match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path) {
            Ok(mut f) => {
                let key = random_bytes::<32>();
                f.write_all(STANDARD.encode(key).as_bytes()).map_err(io)?;
                f.sync_all().map_err(io)?;
                // The new directory entry must survive a power loss too, or the sealed secrets would be
                // unreadable after a restart: sync the directory that holds it.
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::File::open(dir).and_then(|d| d.sync_all()).map_err(io)?;
                }
                Ok(Self::from_bytes(&key))
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                // The creator may not have finished writing: retry briefly until 32 bytes decode.
                for _ in 0..50 {
                    let text = std::fs::read_to_string(path).map_err(io)?;
                    if let Ok(k) = Self::from_base64(&text) {
                        return Ok(k);
                    }
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(KeyringError::BadKey)
            }
            Err(e) => Err(io(e)),
        }
    }

    /// nonce (24 bytes) || ciphertext with tag.
    pub fn seal(&self, plaintext: &str) -> Vec<u8> {
        let nonce = random_bytes::<24>();
        let mut out = nonce.to_vec();
        let ct =
            self.cipher.encrypt(XNonce::from_slice(&nonce), plaintext.as_bytes()).expect("XChaCha20-Poly1305 encryption cannot fail for in-memory buffers");
        out.extend_from_slice(&ct);
        out
    }

    pub fn open(&self, sealed: &[u8]) -> Result<String, KeyringError> {
        if sealed.len() < 24 {
            return Err(KeyringError::Decrypt);
        }
        let (nonce, ct) = sealed.split_at(24);
        let pt = self.cipher.decrypt(XNonce::from_slice(nonce), ct).map_err(|_| KeyringError::Decrypt)?;
        String::from_utf8(pt).map_err(|_| KeyringError::Decrypt)
    }

    /// An HMAC-SHA256 keyed by the MAC key of `purpose`: HMAC-SHA256 of `sitebot mac key: PURPOSE` under
    /// this keyring's key.
    fn mac_for(&self, purpose: &str) -> Hmac<Sha256> {
        let mut derive = <Hmac<Sha256> as Mac>::new_from_slice(&self.key).expect("HMAC takes a key of any length");
        derive.update(b"sitebot mac key: ");
        derive.update(purpose.as_bytes());
        let derived = derive.finalize().into_bytes();
        <Hmac<Sha256> as Mac>::new_from_slice(&derived).expect("HMAC takes a key of any length")
    }

    /// The tag of `message` for `purpose` (HMAC-SHA256 under the purpose's derived key).
    pub fn tag(&self, purpose: &str, message: &[u8]) -> [u8; 32] {
        let mut mac = self.mac_for(purpose);
        mac.update(message);
        mac.finalize().into_bytes().into()
    }

    /// Whether `tag` is `message`'s tag for `purpose`, compared in constant time.
    pub fn verify_tag(&self, purpose: &str, message: &[u8], tag: &[u8]) -> bool {
        let mut mac = self.mac_for(purpose);
        mac.update(message);
        mac.verify_slice(tag).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_and_secrets_have_their_shapes() {
        let t = new_bearer_token();
        assert!(t.starts_with("sbt_") && t.len() == 47, "{t}");
        let s = new_webhook_secret();
        assert!(s.starts_with("whsec_"));
        assert_eq!(STANDARD.decode(&s[6..]).unwrap().len(), 32);
        assert_ne!(new_bearer_token(), t);
    }

    #[test]
    fn sealed_secrets_round_trip_and_resist_tampering() {
        let k = Keyring::from_bytes(&[7u8; 32]);
        let sealed = k.seal("whsec_abc");
        assert!(!sealed.windows(9).any(|w| w == b"whsec_abc"));
        assert_eq!(k.open(&sealed).unwrap(), "whsec_abc");
        let mut bad = sealed.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert!(k.open(&bad).is_err());
        assert!(Keyring::from_bytes(&[8u8; 32]).open(&sealed).is_err());
    }

    #[test]
    fn tags_verify_only_with_their_key_purpose_and_message() {
        let k = Keyring::from_bytes(&[7u8; 32]);
        let tag = k.tag("export", b"facts");
        assert!(k.verify_tag("export", b"facts", &tag));
        assert!(!k.verify_tag("export", b"facts!", &tag), "another message");
        assert!(!k.verify_tag("other", b"facts", &tag), "another purpose");
        assert!(!Keyring::from_bytes(&[8u8; 32]).verify_tag("export", b"facts", &tag), "another key");
        assert!(!k.verify_tag("export", b"facts", &tag[..31]), "a shortened tag");
        // The derived key is not the key itself.
        let mut plain = <Hmac<Sha256> as Mac>::new_from_slice(&[7u8; 32]).unwrap();
        plain.update(b"facts");
        assert_ne!(<[u8; 32]>::from(plain.finalize().into_bytes()), tag);
    }

    #[test]
    fn master_key_is_created_once_with_mode_0600() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("master.key");
        let a = Keyring::load_or_create(&path).unwrap();
        let b = Keyring::load_or_create(&path).unwrap();
        assert_eq!(b.open(&a.seal("x")).unwrap(), "x");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    }
}
