//! Which resource a request asks for. Read-only by construction: every
//! resource answers GET and HEAD, and any other method is refused (405);
//! there is no resource that changes anything.

/// What a request is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// `/`: the status page.
    Page,
    /// `/runs/ID/output`: a run's captured output, as text (ID: an
    /// execution id's characters only).
    Output(String),
    /// `/metrics`: the Prometheus scrape.
    Metrics,
    /// `/healthz`: 200 or 503 with the `status --json` body.
    Healthz,
    /// Any other path: 404.
    NotFound,
    /// A method other than GET or HEAD.
    MethodNotAllowed,
}

/// The route of `method` and `target` (its query string ignored).
pub fn route(method: &str, target: &str) -> Route {
    if method != "GET" && method != "HEAD" {
        return Route::MethodNotAllowed;
    }
    let path = target.split(['?', '#']).next().unwrap_or(target);
    match path {
        "/" | "/index.html" => Route::Page,
        "/metrics" => Route::Metrics,
        "/healthz" => Route::Healthz,
        _ => output_of(path).map_or(Route::NotFound, Route::Output),
    }
}

/// The execution id of `/runs/ID/output`.
fn output_of(path: &str) -> Option<String> {
    let id = path.strip_prefix("/runs/")?.strip_suffix("/output")?;
    let plain =
        (1..=64).contains(&id.len()) && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
    plain.then(|| id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_methods() {
        assert_eq!(route("GET", "/"), Route::Page);
        assert_eq!(route("HEAD", "/?x=1"), Route::Page);
        assert_eq!(route("GET", "/metrics"), Route::Metrics);
        assert_eq!(route("GET", "/healthz?full"), Route::Healthz);
        assert_eq!(route("GET", "/metrics/"), Route::NotFound);
        assert_eq!(route("GET", "/../etc/passwd"), Route::NotFound);
        assert_eq!(
            route("GET", "/runs/01a2-bc/output?x"),
            Route::Output("01a2-bc".into())
        );
        for bad in [
            "/runs//output",
            "/runs/../x/output",
            "/runs/a/b/output",
            "/runs/zz/output",
        ] {
            assert_eq!(route("GET", bad), Route::NotFound, "{bad}");
        }
        for method in ["POST", "PUT", "DELETE", "PATCH", "get", "OPTIONS"] {
            assert_eq!(route(method, "/"), Route::MethodNotAllowed, "{method}");
        }
    }
}
