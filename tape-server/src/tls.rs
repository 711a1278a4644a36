//! TLS for the tape server (`wss://`): a certificate and key from PEM files, or a
//! self-signed certificate for `localhost`, `127.0.0.1` and `::1` generated with rcgen.
//!
//! The official Python SDK turns any base URL into `wss://` when it has an API key, so a
//! local server needs TLS for it, and the client must trust the certificate: Python through
//! `SSL_CERT_FILE`, Node through `NODE_EXTRA_CA_CERTS` ([`TlsFiles::trust_hints`]). rustls
//! runs on the `ring` provider, as everywhere in reel.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

use super::error::TlsError;

/// The names a self-signed certificate is made for.
pub const SELF_SIGNED_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// A server's certificate chain and private key.
pub struct TlsIdentity {
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
}

impl Clone for TlsIdentity {
    fn clone(&self) -> Self {
        TlsIdentity {
            chain: self.chain.clone(),
            key: self.key.clone_key(),
        }
    }
}

impl std::fmt::Debug for TlsIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsIdentity")
            .field("certificates", &self.chain.len())
            .finish_non_exhaustive()
    }
}

impl TlsIdentity {
    /// A chain (leaf first) and its key.
    pub fn new(chain: Vec<CertificateDer<'static>>, key: PrivateKeyDer<'static>) -> Self {
        TlsIdentity { chain, key }
    }

    /// Reads the chain from the PEM file `cert` and the key from the PEM file `key`.
    pub fn from_pem_files(cert: impl AsRef<Path>, key: impl AsRef<Path>) -> Result<Self, TlsError> {
        let (cert, key) = (cert.as_ref(), key.as_ref());
        let read_error =
            |path: &Path, what, error: rustls::pki_types::pem::Error| TlsError::ReadPem {
                path: path.to_path_buf(),
                what,
                message: error.to_string(),
            };
        let chain = CertificateDer::pem_file_iter(cert)
            .map_err(|e| read_error(cert, "certificate", e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| read_error(cert, "certificate", e))?;
        if chain.is_empty() {
            return Err(TlsError::NoCertificate {
                path: cert.to_path_buf(),
            });
        }
        let key =
            PrivateKeyDer::from_pem_file(key).map_err(|e| read_error(key, "private key", e))?;
        Ok(TlsIdentity { chain, key })
    }

    /// The certificate chain, leaf first.
    pub fn certificates(&self) -> &[CertificateDer<'static>] {
        &self.chain
    }

    /// A TLS acceptor presenting this identity.
    pub(crate) fn acceptor(&self) -> Result<TlsAcceptor, TlsError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .and_then(|builder| {
                builder
                    .with_no_client_auth()
                    .with_single_cert(self.chain.clone(), self.key.clone_key())
            })
            .map_err(|error| TlsError::Config {
                message: error.to_string(),
            })?;
        Ok(TlsAcceptor::from(Arc::new(config)))
    }
}

/// A freshly generated self-signed certificate for [`SELF_SIGNED_NAMES`].
#[derive(Clone)]
pub struct SelfSignedCertificate {
    identity: TlsIdentity,
    cert_pem: String,
    key_pem: String,
}

impl std::fmt::Debug for SelfSignedCertificate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SelfSignedCertificate")
            .finish_non_exhaustive()
    }
}

impl SelfSignedCertificate {
    /// Generates a key pair and a certificate naming `localhost`, `127.0.0.1` and `::1`.
    pub fn generate() -> Result<Self, TlsError> {
        let fail = |error: rcgen::Error| TlsError::Generate {
            message: error.to_string(),
        };
        let names: Vec<String> = SELF_SIGNED_NAMES.iter().map(|n| (*n).to_owned()).collect();
        let certified = rcgen::generate_simple_self_signed(names).map_err(fail)?;
        let key = PrivateKeyDer::try_from(certified.signing_key.serialize_der()).map_err(|e| {
            TlsError::Generate {
                message: e.to_owned(),
            }
        })?;
        Ok(SelfSignedCertificate {
            identity: TlsIdentity::new(vec![certified.cert.der().clone()], key),
            cert_pem: certified.cert.pem(),
            key_pem: certified.signing_key.serialize_pem(),
        })
    }

    /// The identity a server presents.
    pub fn identity(&self) -> &TlsIdentity {
        &self.identity
    }

    /// The certificate (DER), for a client to trust.
    pub fn certificate(&self) -> CertificateDer<'static> {
        self.identity.chain[0].clone()
    }

    /// The certificate, PEM.
    pub fn certificate_pem(&self) -> &str {
        &self.cert_pem
    }

    /// Writes `cert.pem` and `key.pem` into `dir` (created if needed; the key readable by
    /// its owner only, on Unix).
    pub fn write_to(&self, dir: impl AsRef<Path>) -> Result<TlsFiles, TlsError> {
        let dir = dir.as_ref();
        let write_error = |path: &Path| {
            let path = path.to_path_buf();
            move |source| TlsError::Write { path, source }
        };
        std::fs::create_dir_all(dir).map_err(write_error(dir))?;
        let files = TlsFiles {
            cert: dir.join("cert.pem"),
            key: dir.join("key.pem"),
        };
        std::fs::write(&files.cert, &self.cert_pem).map_err(write_error(&files.cert))?;
        write_private(&files.key, &self.key_pem).map_err(write_error(&files.key))?;
        Ok(files)
    }
}

#[cfg(unix)]
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::fs::PermissionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    // `mode` only applies to a new file: an older key file is made private too.
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.write_all(text.as_bytes())
}

#[cfg(not(unix))]
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::write(path, text)
}

/// Where a self-signed certificate and its key were written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The certificate, PEM.
    pub cert: PathBuf,
    /// The private key, PEM.
    pub key: PathBuf,
}

impl TlsFiles {
    /// How clients trust the certificate, one instruction a line.
    ///
    /// ```
    /// use std::path::PathBuf;
    /// use reel_tape_server::TlsFiles;
    ///
    /// let files = TlsFiles { cert: PathBuf::from("/tmp/c.pem"), key: PathBuf::from("/tmp/k.pem") };
    /// assert_eq!(
    ///     files.trust_hints()[0],
    ///     "Python (google-genai): export SSL_CERT_FILE=/tmp/c.pem"
    /// );
    /// ```
    pub fn trust_hints(&self) -> Vec<String> {
        let cert = self.cert.display();
        vec![
            format!("Python (google-genai): export SSL_CERT_FILE={cert}"),
            format!("Node (@google/genai): export NODE_EXTRA_CA_CERTS={cert}"),
            format!("reel: WebSocketConnector::with_root_certificates_pem(\"{cert}\")"),
        ]
    }
}

/// The default directory for a self-signed certificate: `reel-serve-tls` in the system's
/// temporary directory.
pub fn default_tls_dir() -> PathBuf {
    std::env::temp_dir().join("reel-serve-tls")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_self_signed_certificate_round_trips_through_its_files() {
        let generated = SelfSignedCertificate::generate().unwrap();
        let dir = std::env::temp_dir().join(format!("reel-tls-files-{}", std::process::id()));
        let files = generated.write_to(&dir).unwrap();
        let read = TlsIdentity::from_pem_files(&files.cert, &files.key).unwrap();
        assert_eq!(read.certificates(), &[generated.certificate()]);
        assert!(read.acceptor().is_ok());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&files.key).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let error = TlsIdentity::from_pem_files(&files.key, &files.key).unwrap_err();
        assert!(matches!(error, TlsError::NoCertificate { .. }), "{error:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
