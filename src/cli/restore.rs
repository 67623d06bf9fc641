//! `sitebot restore --from REPLICA_URL`: brings a lost node back from the replica Litestream kept of its
//! database. Litestream does the restore (`litestream restore -o FILE URL`); sitebot checks what it is
//! restored into, and what came out, before the database takes its place.
//!
//! Only the database is replicated. The master key must already be there (it seals the webhook secrets
//! inside; a new one would open none of them), so restore refuses to run without it, and refuses to
//! overwrite a database. The vector index files are derived: `serve` builds them before `/readyz`
//! reports ready.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};
use clap::Args;

use crate::config::Config;
use crate::secrets::Keyring;
use crate::store::{DB_FILE, Store};

#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// The replica to restore from, as Litestream names it: file:///var/backups/sitebot,
    /// s3://bucket/path (credentials from LITESTREAM_ACCESS_KEY_ID and LITESTREAM_SECRET_ACCESS_KEY),
    /// sftp://user@host/path
    #[arg(long = "from", env = "SITEBOT_RESTORE_FROM", value_name = "REPLICA_URL")]
    pub from: String,
    /// The litestream binary [default: the one beside sitebot, else litestream on PATH]
    #[arg(long, env = "SITEBOT_LITESTREAM", value_name = "PATH")]
    pub litestream: Option<PathBuf>,
}

/// The replica URL as given, and as it may be printed (a password in it replaced).
struct Replica {
    url: String,
    shown: String,
}

fn parse_replica(from: &str) -> anyhow::Result<Replica> {
    let bad = || anyhow::anyhow!("`{from}` is not a replica URL such as file:///var/backups/sitebot or s3://bucket/path");
    let mut url = url::Url::parse(from).map_err(|_| bad())?;
    if url.cannot_be_a_base() {
        return Err(bad());
    }
    if url.scheme() == "file" {
        let dir = url.to_file_path().map_err(|_| bad())?;
        if !dir.is_dir() {
            bail!("no replica at {}: not a directory", dir.display());
        }
    }
    if url.password().is_some() {
        let _ = url.set_password(Some("redacted"));
    }
    Ok(Replica { url: from.to_owned(), shown: url.to_string() })
}

/// The litestream binary: the flag's, else the one `install.sh --with-litestream` put beside sitebot,
/// else the first on PATH.
fn litestream_binary(flag: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    if let Some(path) = flag {
        if !path.is_file() {
            bail!("--litestream {}: no such file", path.display());
        }
        return Ok(path);
    }
    let exe = std::env::current_exe().context("cannot tell where sitebot is installed")?;
    let beside = exe.parent().map(|d| d.join("litestream")).filter(|p| p.is_file());
    let on_path = || std::env::var_os("PATH").and_then(|paths| std::env::split_paths(&paths).map(|d| d.join("litestream")).find(|p| p.is_file()));
    beside.or_else(on_path).ok_or_else(|| {
        anyhow::anyhow!(
            "Litestream is not installed: no litestream beside {} nor on PATH; install it with ./install.sh --with-litestream, or name it with --litestream PATH",
            exe.display()
        )
    })
}

/// The keyring the restored database was sealed with: `secrets.master_key`, or the data directory's
/// `master.key`, which must be there (restore never makes one).
fn existing_keyring(config: &Config, data_dir: &Path) -> anyhow::Result<Keyring> {
    if let Some(key) = &config.secrets.master_key {
        return Ok(Keyring::from_base64(key.expose())?);
    }
    let path = data_dir.join("master.key");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "no master key at {}: copy the lost node's master.key there first (mode 0600), or set secrets.master_key; \
             it seals the webhook secrets in the replica, and a new key would open none of them",
            path.display()
        ),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    Keyring::from_base64(&text).with_context(|| format!("{} is not a master key", path.display()))
}

pub fn run(args: RestoreArgs, config: &Config, data_dir: &Path) -> anyhow::Result<()> {
    let replica = parse_replica(&args.from)?;
    let db = data_dir.join(DB_FILE);
    for side in ["", "-wal", "-shm"] {
        let path = data_dir.join(format!("{DB_FILE}{side}"));
        if path.exists() {
            bail!(
                "{} exists: restore never overwrites a database; move the data directory's {DB_FILE}* away first, or restore into another --data-dir",
                path.display()
            );
        }
    }
    crate::app::ensure_data_dir(data_dir)?;
    let keyring = existing_keyring(config, data_dir)?;
    let litestream = litestream_binary(args.litestream)?;

    // Restored under another name, checked, then renamed into place: an interrupted or failed restore
    // leaves no database that a later run (or `serve`) would take for the real one.
    let partial = data_dir.join(format!("{DB_FILE}.restoring"));
    remove_partial(data_dir)?;
    let started = Instant::now();
    let out = Command::new(&litestream)
        .arg("restore")
        .arg("-o")
        .arg(&partial)
        .arg(&replica.url)
        .output()
        .with_context(|| format!("cannot run {}", litestream.display()))?;
    if !out.status.success() {
        let _ = remove_partial(data_dir);
        let said = String::from_utf8_lossy(&out.stderr);
        bail!("litestream restore from {} failed ({}): {}", replica.shown, out.status, said.trim().replace(&replica.url, &replica.shown));
    }
    let restore_secs = started.elapsed().as_secs_f64();
    // Litestream writes it with the umask's mode; private before SQLite opens it, so that its WAL and
    // shared-memory files take the same mode.
    use std::os::unix::fs::PermissionsExt;
    let private = |p: &Path| std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o600));
    private(&partial)?;
    let checked = check_restored(&partial, keyring);
    let (sites, schema) = match checked {
        Ok(facts) => facts,
        Err(e) => {
            let _ = remove_partial(data_dir);
            return Err(e);
        }
    };
    // The store is closed, but its WAL may remain (a read-only connection that closes last does not
    // checkpoint): the WAL moves with the database, the shared-memory index is rebuilt at the next open.
    let (wal, shm) = (data_dir.join(format!("{DB_FILE}.restoring-wal")), data_dir.join(format!("{DB_FILE}.restoring-shm")));
    if wal.exists() {
        private(&wal)?;
        std::fs::rename(&wal, data_dir.join(format!("{DB_FILE}-wal"))).context("cannot move the restored database's WAL")?;
    }
    let _ = std::fs::remove_file(shm);
    std::fs::rename(&partial, &db).with_context(|| format!("cannot move the restored database to {}", db.display()))?;
    std::fs::File::open(data_dir).and_then(|d| d.sync_all()).with_context(|| format!("cannot sync {}", data_dir.display()))?;
    let size = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0);
    println!(
        "restored {} from {} in {restore_secs:.1} s ({size} bytes, schema version {schema}, integrity ok, {sites} site(s), their webhook secrets open with the master key)",
        db.display(),
        replica.shown
    );
    println!("next: `sitebot serve` builds the vector indexes before /readyz answers 200; replicate this node to a new replica path");
    Ok(())
}

/// Opens the restored file (applying migrations a newer sitebot has), checks its integrity and that the
/// master key opens every site's webhook secrets; returns the sites and the schema version.
fn check_restored(path: &Path, keyring: Keyring) -> anyhow::Result<(usize, i64)> {
    // No Litestream watches the temporary file: SQLite's own checkpoints.
    let store = Store::open(path, keyring).context("the restored database does not open")?;
    let integrity = store.integrity()?;
    if integrity != "ok" {
        bail!("the restored database fails its integrity check: {integrity}");
    }
    let sites = store.sites().list()?;
    for site in &sites {
        store
            .site(site.id)
            .signing_secrets()
            .with_context(|| format!("the master key does not open the webhook secrets of site {}: is it the lost node's master.key?", site.id))?;
    }
    Ok((sites.len(), store.schema_version()?))
}

/// Removes what a restore under the temporary name left (Litestream's own temporary files included).
fn remove_partial(data_dir: &Path) -> anyhow::Result<()> {
    let prefix = format!("{DB_FILE}.restoring");
    for entry in std::fs::read_dir(data_dir).with_context(|| format!("cannot read {}", data_dir.display()))? {
        let entry = entry?;
        if entry.file_name().to_str().is_some_and(|n| n.starts_with(&prefix)) {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replica_urls_are_checked_and_passwords_never_shown() {
        let dir = tempfile::tempdir().unwrap();
        let url = url::Url::from_directory_path(dir.path()).unwrap().to_string();
        assert_eq!(parse_replica(&url).unwrap().url, url);
        let err = parse_replica("file:///nonexistent/replica").err().unwrap().to_string();
        assert!(err.contains("no replica at /nonexistent/replica"), "{err}");
        for bad in ["/var/backups/sitebot", "backups", "mailto:a@b.example"] {
            let err = parse_replica(bad).err().unwrap().to_string();
            assert!(err.contains("is not a replica URL"), "{bad}: {err}");
        }
        let r = parse_replica("sftp://backup:hunter2@backup.example.net/srv/sitebot").unwrap();
        assert!(r.url.contains("hunter2") && !r.shown.contains("hunter2"), "{}", r.shown);
    }
}
