#![allow(dead_code)] // shared by the CLI tests, the API tests and the crawl benchmark; each uses a subset
//! A real website on loopback for the crawler: plain HTTP/1.1 (hyper) on its own thread, so sync and
//! async tests alike can use it. It records every request, answers `If-None-Match` with 304, and
//! its pages can be changed and deleted while it runs.
//!
//! `Website::generated(n)`: a home page, `n` pages `/page/{i}` linked as a binary tree (page i links
//! pages 2i+1 and 2i+2), only the even ones in the sitemap (an index naming a gzip sitemap), and the
//! cases a crawler must handle: a disallowed `/private/` area linked from the home page, a page only
//! a link reaches (`/hidden/only-linked`, from page 5), a redirect (`/old-page` → `/page/7`), a broken
//! link (`/missing`, from page 3), a tracking-parameter twin (page 4 links `/page/8?utm_source=...`),
//! a print version of page 10 whose canonical URL is page 10, and a CSV file.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response};

/// One request as the site saw it.
#[derive(Debug, Clone)]
pub struct Logged {
    pub path: String,
    pub status: u16,
    pub user_agent: String,
    pub at: std::time::Instant,
}

#[derive(Debug, Clone)]
enum Resource {
    Page { content_type: &'static str, body: Vec<u8> },
    Redirect(String),
}

#[derive(Default)]
struct State {
    resources: BTreeMap<String, Resource>,
    /// Path → (status, times left): answered instead of the resource (429s with `Retry-After: 1`).
    failures: BTreeMap<String, (u16, usize)>,
    log: Vec<Logged>,
    /// How long each answer waits before it is sent (a slow site; none by default).
    delay: std::time::Duration,
}

pub struct Website {
    pub addr: SocketAddr,
    /// `http://127.0.0.1:PORT`
    pub base: String,
    state: Arc<Mutex<State>>,
}

/// A page's text: unique words per page so each is its own document.
pub fn page_html(i: usize, n: usize, extra: &str) -> String {
    let mut links = String::new();
    for child in [2 * i + 1, 2 * i + 2] {
        if child < n {
            links.push_str(&format!("<li><a href=\"/page/{child}\">Page {child}</a></li>"));
        }
    }
    match i {
        3 => links.push_str("<li><a href=\"/missing\">A page that is gone</a></li>"),
        4 => links.push_str("<li><a href=\"/page/8?utm_source=newsletter&amp;utm_medium=email#intro\">Page 8 again</a></li>"),
        5 => links.push_str("<li><a href=\"/hidden/only-linked\">Only linked here</a></li>"),
        10 => links.push_str("<li><a href=\"/print/page/10\">Print this page</a></li>"),
        _ => {}
    }
    format!(
        "<!doctype html><html><head><title>Page {i}</title></head><body>\
         <nav><a href=\"/\">Home</a> <a href=\"/about\">About</a></nav>\
         <main><h1>Page {i}</h1>\
         <p>This is page number {i} of the generated handbook. It explains topic {i} in plain words: how item {i} is made, \
         who uses variant {i}, and what the order {i} costs when it ships.</p>\
         <h2>Details of topic {i}</h2><p>Section {i} lists the parts of model {i}. {extra}</p>\
         <ul>{links}</ul></main><footer>Footer text that is not knowledge.</footer></body></html>"
    )
}

fn html(body: String) -> Resource {
    Resource::Page { content_type: "text/html; charset=utf-8", body: body.into_bytes() }
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(data).unwrap();
    gz.finish().unwrap()
}

impl Website {
    /// The site described above, with `n` pages.
    pub fn generated(n: usize) -> Website {
        let site = Website::start();
        let base = site.base.clone();
        let mut r = BTreeMap::new();
        r.insert(
            "/robots.txt".into(),
            Resource::Page {
                content_type: "text/plain",
                body: format!("User-agent: *\nDisallow: /private/\n\nSitemap: {base}/sitemap_index.xml\n").into_bytes(),
            },
        );
        let sitemap: String = (0..n).step_by(2).map(|i| format!("<url><loc>{base}/page/{i}</loc></url>")).collect();
        let urlset =
            format!("<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>{base}/</loc></url>{sitemap}</urlset>");
        r.insert("/sitemap-pages.xml.gz".into(), Resource::Page { content_type: "application/gzip", body: gzip(urlset.as_bytes()) });
        r.insert(
            "/sitemap_index.xml".into(),
            Resource::Page {
                content_type: "application/xml",
                body: format!("<?xml version=\"1.0\"?><sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><sitemap><loc>{base}/sitemap-pages.xml.gz</loc></sitemap></sitemapindex>").into_bytes(),
            },
        );
        r.insert(
            "/".into(),
            html(
                "<!doctype html><html><head><title>Handbook home</title></head><body><main><h1>Handbook home</h1>\
                 <p>Welcome to the generated handbook: every page explains one topic.</p>\
                 <ul><li><a href=\"/page/0\">Start</a></li><li><a href=\"/private/secret\">Staff only</a></li>\
                 <li><a href=\"/old-page\">Old link</a></li><li><a href=\"/files/data.csv\">Data</a></li>\
                 <li><a href=\"https://elsewhere.example/\">Elsewhere</a></li></ul></main></body></html>"
                    .into(),
            ),
        );
        r.insert(
            "/about".into(),
            html("<html><head><title>About us</title></head><body><p>We write the generated handbook for our readers.</p></body></html>".into()),
        );
        r.insert("/private/secret".into(), html("<html><body><p>Staff only.</p></body></html>".into()));
        r.insert("/old-page".into(), Resource::Redirect("/page/7".into()));
        r.insert("/files/data.csv".into(), Resource::Page { content_type: "text/csv", body: b"a,b\n1,2\n".to_vec() });
        r.insert(
            "/hidden/only-linked".into(),
            html(
                "<html><head><title>Hidden page</title></head><body><p>Only one link leads to this hidden page about the secret garden.</p></body></html>"
                    .into(),
            ),
        );
        r.insert("/print/page/10".into(), html(page_html(10, n, "").replace("<head>", &format!("<head><link rel=\"canonical\" href=\"{base}/page/10\">"))));
        for i in 0..n {
            r.insert(format!("/page/{i}"), html(page_html(i, n, "")));
        }
        site.state.lock().unwrap().resources = r;
        site
    }

    /// An empty site; serve what `set` puts in it.
    pub fn start() -> Website {
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        std_listener.set_nonblocking(true).unwrap();
        let addr = std_listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(State::default()));
        let st = state.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(std_listener).unwrap();
                loop {
                    let Ok((stream, _)) = listener.accept().await else { continue };
                    let st = st.clone();
                    tokio::spawn(async move {
                        let svc = hyper::service::service_fn(move |req| {
                            let st = st.clone();
                            async move {
                                let delay = st.lock().unwrap().delay;
                                if !delay.is_zero() {
                                    tokio::time::sleep(delay).await;
                                }
                                Ok::<_, Infallible>(answer(&st, req))
                            }
                        });
                        let _ = hyper::server::conn::http1::Builder::new().serve_connection(hyper_util::rt::TokioIo::new(stream), svc).await;
                    });
                }
            });
        });
        Website { addr, base: format!("http://{addr}"), state }
    }

    /// Every answer from now on waits `delay` first, as a slow site's would.
    pub fn set_delay(&self, delay: std::time::Duration) {
        self.state.lock().unwrap().delay = delay;
    }

    /// Replaces page `path`'s HTML.
    pub fn set_html(&self, path: &str, body: String) {
        self.state.lock().unwrap().resources.insert(path.to_owned(), html(body));
    }

    /// Serves `body` as `content_type` at `path`.
    pub fn set(&self, path: &str, content_type: &'static str, body: &str) {
        self.state.lock().unwrap().resources.insert(path.to_owned(), Resource::Page { content_type, body: body.as_bytes().to_vec() });
    }

    /// `path` answers `status` the next `times` requests.
    pub fn fail(&self, path: &str, status: u16, times: usize) {
        self.state.lock().unwrap().failures.insert(path.to_owned(), (status, times));
    }

    /// The page answers 404 from now on.
    pub fn remove(&self, path: &str) {
        self.state.lock().unwrap().resources.remove(path);
    }

    pub fn log(&self) -> Vec<Logged> {
        self.state.lock().unwrap().log.clone()
    }

    pub fn clear_log(&self) {
        self.state.lock().unwrap().log.clear();
    }

    /// Requests whose path starts with `prefix`.
    pub fn requests_to(&self, prefix: &str) -> usize {
        self.log().iter().filter(|l| l.path.starts_with(prefix)).count()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

fn etag(body: &[u8]) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    body.hash(&mut h);
    format!("\"{:x}\"", h.finish())
}

fn answer(state: &Mutex<State>, req: Request<hyper::body::Incoming>) -> Response<Full<Bytes>> {
    let path = req.uri().path_and_query().map(|p| p.as_str().to_owned()).unwrap_or_default();
    let header = |n: &str| req.headers().get(n).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    let mut st = state.lock().unwrap();
    // Query strings do not select another resource here (as on most sites).
    let resource = st.resources.get(req.uri().path()).cloned();
    let failure = st.failures.get_mut(req.uri().path()).filter(|(_, left)| *left > 0).map(|(status, left)| {
        *left -= 1;
        *status
    });
    let response = match resource {
        _ if failure.is_some() => {
            Response::builder().status(failure.unwrap_or(500)).header("retry-after", "1").body(Full::new(Bytes::from_static(b"try again"))).unwrap()
        }
        None => Response::builder().status(404).body(Full::new(Bytes::from_static(b"not found"))).unwrap(),
        Some(Resource::Redirect(to)) => Response::builder().status(301).header("location", to).body(Full::new(Bytes::new())).unwrap(),
        Some(Resource::Page { content_type, body }) => {
            let tag = etag(&body);
            if header("if-none-match") == tag {
                Response::builder().status(304).header("etag", tag).body(Full::new(Bytes::new())).unwrap()
            } else {
                Response::builder().status(200).header("content-type", content_type).header("etag", tag).body(Full::new(Bytes::from(body))).unwrap()
            }
        }
    };
    st.log.push(Logged { path, status: response.status().as_u16(), user_agent: header("user-agent"), at: std::time::Instant::now() });
    response
}
