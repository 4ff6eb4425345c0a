//! object_store's HTTP transport over the reqwest 0.12 client Tollgate already builds
//! (rustls with ring): object_store's own transport would add reqwest 0.13 and aws-lc-rs.

use std::time::Duration;

use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest, HttpResponse,
    HttpResponseBody, HttpService,
};
use object_store::ClientOptions;

/// Builds one reqwest client per store.
#[derive(Debug)]
pub struct Reqwest12 {
    /// Whether `http://` URLs may be followed (`files.s3.allow_http`).
    pub allow_http: bool,
}

impl HttpConnector for Reqwest12 {
    fn connect(&self, _options: &ClientOptions) -> object_store::Result<HttpClient> {
        let client = reqwest::Client::builder()
            .https_only(!self.allow_http)
            .connect_timeout(Duration::from_secs(10))
            // Between two reads of a body (a download streams for as long as it takes).
            .read_timeout(Duration::from_secs(60))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| object_store::Error::Generic {
                store: "S3",
                source: Box::new(e),
            })?;
        Ok(HttpClient::new(Service(client)))
    }
}

#[derive(Debug)]
struct Service(reqwest::Client);

fn kind_of(e: &reqwest::Error) -> HttpErrorKind {
    if e.is_timeout() {
        HttpErrorKind::Timeout
    } else if e.is_connect() {
        HttpErrorKind::Connect
    } else if e.is_body() {
        HttpErrorKind::Interrupted
    } else if e.is_decode() {
        HttpErrorKind::Decode
    } else if e.is_request() {
        HttpErrorKind::Request
    } else {
        HttpErrorKind::Unknown
    }
}

fn http_error(e: reqwest::Error) -> HttpError {
    HttpError::new(kind_of(&e), e.without_url())
}

#[async_trait::async_trait]
impl HttpService for Service {
    async fn call(&self, req: HttpRequest) -> Result<HttpResponse, HttpError> {
        let (parts, body) = req.into_parts();
        let url = reqwest::Url::parse(&parts.uri.to_string())
            .map_err(|e| HttpError::new(HttpErrorKind::Request, e))?;
        let mut request = reqwest::Request::new(parts.method, url);
        *request.headers_mut() = parts.headers;
        *request.body_mut() = Some(reqwest::Body::wrap(body));
        let response = self.0.execute(request).await.map_err(http_error)?;
        let response: http::Response<reqwest::Body> = response.into();
        let (parts, body) = response.into_parts();
        let body = http_body_util::BodyExt::map_err(body, http_error);
        Ok(HttpResponse::from_parts(parts, HttpResponseBody::new(body)))
    }
}
