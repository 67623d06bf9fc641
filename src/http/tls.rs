//! Certificates: configured PEM files, or a self-signed certificate made once with rcgen and reused.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::ServerConfig;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use sha2::{Digest, Sha256};

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    #[error("{path} holds no usable PEM {what}")]
    Pem { path: PathBuf, what: &'static str },
    #[error("cannot make a self-signed certificate: {0}")]
    Generate(String),
    #[error("the certificate and key do not fit together: {0}")]
    Config(String),
}

/// Where the self-signed pair lives inside the data directory.
pub fn self_signed_paths(data_dir: &Path) -> (PathBuf, PathBuf) {
    let dir = data_dir.join("tls");
    (dir.join("cert.pem"), dir.join("key.pem"))
}

/// What the server presents: the rustls config, and the SHA-256 fingerprint of the leaf certificate.
pub struct Identity {
    pub config: Arc<ServerConfig>,
    pub fingerprint: String,
    pub cert_path: PathBuf,
    pub self_signed: bool,
}

/// Loads the configured PEM pair, or the self-signed pair from the data directory, making it on first
/// start (for `hostnames` plus `localhost` and `127.0.0.1`, files mode 0600).
pub fn load_identity(data_dir: &Path, hostnames: &[String], configured: Option<(&Path, &Path)>) -> Result<Identity, TlsError> {
    let (cert_path, key_path, self_signed) = match configured {
        Some((c, k)) => (c.to_owned(), k.to_owned(), false),
        None => {
            let (c, k) = self_signed_paths(data_dir);
            if !c.exists() || !k.exists() {
                generate_self_signed(&c, &k, hostnames)?;
                tracing::info!(cert = %c.display(), "made a self-signed certificate");
            }
            (c, k, true)
        }
    };
    let read = |p: &Path| std::fs::read(p).map_err(|source| TlsError::Read { path: p.to_owned(), source });
    let cert_pem = read(&cert_path)?;
    let key_pem = read(&key_path)?;
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(&cert_pem).collect::<Result<_, _>>().map_err(|_| TlsError::Pem { path: cert_path.clone(), what: "certificate" })?;
    if certs.is_empty() {
        return Err(TlsError::Pem { path: cert_path, what: "certificate" });
    }
    let key = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|_| TlsError::Pem { path: key_path.clone(), what: "private key" })?;
    let fingerprint = fingerprint(&certs[0]);
    // rustls deprecates its ring provider for lacking post-quantum key exchange (X25519MLKEM768, which
    // only its aws-lc-rs provider has). ring is kept: aws-lc-rs would add a C and assembly build of
    // several minutes to every build here for a key exchange browsers fall back from without it.
    #[allow(deprecated)]
    let provider = rustls::crypto::ring::default_provider();
    let mut config = ServerConfig::builder_with_provider(Arc::new(provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Config(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| TlsError::Config(e.to_string()))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Identity { config: Arc::new(config), fingerprint, cert_path, self_signed })
}

fn generate_self_signed(cert_path: &Path, key_path: &Path, hostnames: &[String]) -> Result<(), TlsError> {
    let mut names: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    for h in hostnames {
        if !names.contains(h) {
            names.push(h.clone());
        }
    }
    let ck = rcgen::generate_simple_self_signed(names).map_err(|e| TlsError::Generate(e.to_string()))?;
    let dir = cert_path.parent().expect("cert path has a parent");
    std::fs::create_dir_all(dir).map_err(|source| TlsError::Write { path: dir.to_owned(), source })?;
    write_private(key_path, ck.signing_key.serialize_pem().as_bytes())?;
    write_private(cert_path, ck.cert.pem().as_bytes())?;
    Ok(())
}

/// Writes a file with mode 0600 through a temporary name, so a crash never leaves half a key.
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), TlsError> {
    let tmp = path.with_extension("tmp");
    let err = |source| TlsError::Write { path: path.to_owned(), source };
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp).map_err(err)?;
    f.write_all(bytes).map_err(err)?;
    f.sync_all().map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)
}

/// `AB:CD:...` SHA-256 of the DER certificate, as browsers and `openssl x509 -fingerprint` show it.
pub fn fingerprint(cert: &CertificateDer<'_>) -> String {
    Sha256::digest(cert.as_ref()).iter().map(|b| format!("{b:02X}")).collect::<Vec<_>>().join(":")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn self_signed_is_made_once_private_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let a = load_identity(dir.path(), &["bot.example.com".into()], None).unwrap();
        let b = load_identity(dir.path(), &[], None).unwrap();
        assert_eq!(a.fingerprint, b.fingerprint);
        assert!(a.self_signed);
        let (c, k) = self_signed_paths(dir.path());
        for p in [c, k] {
            assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
        }
        assert_eq!(a.config.alpn_protocols, vec![b"h2".to_vec(), b"http/1.1".to_vec()]);
    }

    #[test]
    fn configured_pem_replaces_self_signed() {
        let dir = tempfile::tempdir().unwrap();
        let ck = rcgen::generate_simple_self_signed(vec!["custom.example".to_string()]).unwrap();
        let (c, k) = (dir.path().join("c.pem"), dir.path().join("k.pem"));
        std::fs::write(&c, ck.cert.pem()).unwrap();
        std::fs::write(&k, ck.signing_key.serialize_pem()).unwrap();
        let id = load_identity(dir.path(), &[], Some((&c, &k))).unwrap();
        assert!(!id.self_signed);
        assert_eq!(id.fingerprint, fingerprint(ck.cert.der()));
        assert!(!self_signed_paths(dir.path()).0.exists());
        std::fs::write(&k, "not a key").unwrap();
        assert!(matches!(load_identity(dir.path(), &[], Some((&c, &k))), Err(TlsError::Pem { .. })));
    }
}
