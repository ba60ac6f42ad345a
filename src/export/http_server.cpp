// SPDX-License-Identifier: Apache-2.0
// libmicrohttpd server for /metrics and computed pages, with connection, header-size and timeout
// limits; a computed page's connection is suspended while the worker thread computes it.
#include "export/http_server.hpp"

#include "core/fatal.hpp"
#include "core/shared_library.hpp"
#include "export/tls_peer.hpp"

#include <fmt/format.h>
#include <microhttpd.h>

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace gua::exporter {

namespace {

/// libmicrohttpd's entry points, loaded on first use: only `gua daemon --listen` needs it (and
/// the GnuTLS stack it links).
struct MhdApi {
    decltype(&MHD_start_daemon) start_daemon = nullptr;
    decltype(&MHD_stop_daemon) stop_daemon = nullptr;
    decltype(&MHD_create_response_from_buffer) create_response_from_buffer = nullptr;
    decltype(&MHD_create_response_from_buffer_with_free_callback_cls)
        create_response_from_buffer_with_free_callback_cls = nullptr;
    decltype(&MHD_add_response_header) add_response_header = nullptr;
    decltype(&MHD_queue_response) queue_response = nullptr;
    decltype(&MHD_destroy_response) destroy_response = nullptr;
    decltype(&MHD_add_connection) add_connection = nullptr;
    decltype(&MHD_get_connection_values) get_connection_values = nullptr;
    decltype(&MHD_suspend_connection) suspend_connection = nullptr;
    decltype(&MHD_resume_connection) resume_connection = nullptr;
    decltype(&MHD_basic_auth_get_username_password) basic_auth_get_username_password = nullptr;
    decltype(&MHD_queue_basic_auth_fail_response) queue_basic_auth_fail_response = nullptr;
    decltype(&MHD_free) free = nullptr;
    decltype(&MHD_get_connection_info) get_connection_info = nullptr;
};

const MhdApi& mhd() {
    static const MhdApi api = [] {
        const SharedLibrary& lib =
            SharedLibrary::open("libmicrohttpd.so.12", "libmicrohttpd12", "gua daemon --listen");
        MhdApi a;
        lib.bind(a.start_daemon, "MHD_start_daemon");
        lib.bind(a.stop_daemon, "MHD_stop_daemon");
        lib.bind(a.create_response_from_buffer, "MHD_create_response_from_buffer");
        lib.bind(a.create_response_from_buffer_with_free_callback_cls,
                 "MHD_create_response_from_buffer_with_free_callback_cls");
        lib.bind(a.add_response_header, "MHD_add_response_header");
        lib.bind(a.queue_response, "MHD_queue_response");
        lib.bind(a.destroy_response, "MHD_destroy_response");
        lib.bind(a.add_connection, "MHD_add_connection");
        lib.bind(a.get_connection_values, "MHD_get_connection_values");
        lib.bind(a.suspend_connection, "MHD_suspend_connection");
        lib.bind(a.resume_connection, "MHD_resume_connection");
        lib.bind(a.basic_auth_get_username_password, "MHD_basic_auth_get_username_password");
        lib.bind(a.queue_basic_auth_fail_response, "MHD_queue_basic_auth_fail_response");
        lib.bind(a.free, "MHD_free");
        lib.bind(a.get_connection_info, "MHD_get_connection_info");
        return a;
    }();
    return api;
}

constexpr std::string_view k_index_html = "<html><head><title>gua</title></head><body><h1>gua</h1>"
                                          "<p><a href=\"/metrics\">Metrics</a></p></body></html>\n";

bool is_ipv6(const std::string& host) {
    return host.find(':') != std::string::npos;
}

/// Creates, binds and listens on a socket for `address`; returns the fd or throws Fatal.
int bind_socket(const ListenAddress& address, const HttpLimits& limits) {
    sockaddr_storage storage{};
    socklen_t length = 0;
    int family = AF_INET;
    if (is_ipv6(address.host)) {
        family = AF_INET6;
        auto* in6 = reinterpret_cast<sockaddr_in6*>(&storage);
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(address.port);
        inet_pton(AF_INET6, address.host.c_str(), &in6->sin6_addr);
        length = sizeof(sockaddr_in6);
    } else {
        auto* in4 = reinterpret_cast<sockaddr_in*>(&storage);
        in4->sin_family = AF_INET;
        in4->sin_port = htons(address.port);
        inet_pton(AF_INET, address.host.c_str(), &in4->sin_addr);
        length = sizeof(sockaddr_in);
    }
    const int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        throw Fatal(fmt::format("--listen: cannot create a socket: {}", std::strerror(errno)));
    }
    const int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    if (bind(fd, reinterpret_cast<sockaddr*>(&storage), length) != 0 ||
        listen(fd, static_cast<int>(limits.connection_limit)) != 0) {
        const int err = errno;
        close(fd);
        throw Fatal(fmt::format("--listen: cannot listen on {}:{}: {}", address.host, address.port,
                                std::strerror(err)),
                    err == EADDRINUSE ? ExitCode::conflict : ExitCode::usage);
    }
    return fd;
}

std::uint16_t bound_port(int fd) {
    sockaddr_storage storage{};
    socklen_t length = sizeof(storage);
    getsockname(fd, reinterpret_cast<sockaddr*>(&storage), &length);
    if (storage.ss_family == AF_INET6) {
        return ntohs(reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port);
    }
    return ntohs(reinterpret_cast<sockaddr_in*>(&storage)->sin_port);
}

void release_body(void* holder) {
    delete static_cast<std::shared_ptr<const std::string>*>(holder);
}

MHD_Result reply(MHD_Connection* connection, unsigned status, std::string_view body,
                 const char* content_type, unsigned retry_after_s = 0) {
    MHD_Response* response = mhd().create_response_from_buffer(
        body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_MUST_COPY);
    if (response == nullptr) {
        return MHD_NO;
    }
    mhd().add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    mhd().add_response_header(response, "X-Content-Type-Options", "nosniff");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED) {
        mhd().add_response_header(response, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    }
    if (retry_after_s > 0) {
        mhd().add_response_header(response, MHD_HTTP_HEADER_RETRY_AFTER,
                                  std::to_string(retry_after_s).c_str());
    }
    const MHD_Result result = mhd().queue_response(connection, status, response);
    mhd().destroy_response(response);
    return result;
}

/// One request for a computed page, from its first call to its completion.
struct PageRequest {
    MHD_Connection* connection = nullptr;
    std::string path;
    Query query;
    Page page; ///< set by the worker before it resumes the connection
};

MHD_Result collect_argument(void* cls, MHD_ValueKind /*kind*/, const char* key, const char* value) {
    static_cast<Query*>(cls)->emplace_back(key != nullptr ? key : "",
                                           value != nullptr ? value : "");
    return MHD_YES;
}

void request_completed(void* /*cls*/, MHD_Connection* /*connection*/, void** con_cls,
                       MHD_RequestTerminationCode /*toe*/) {
    delete static_cast<PageRequest*>(*con_cls);
    *con_cls = nullptr;
}

/// Suspends the connection and computes its page on the worker thread, or answers 503 while
/// another page is being computed.
MHD_Result serve_page(MHD_Connection* connection, HttpServer& server, std::string_view path,
                      void** con_cls) {
    const PageRoutes& pages = server.pages();
    if (!server.claim_worker()) {
        return reply(connection, MHD_HTTP_SERVICE_UNAVAILABLE,
                     "another report is being computed; retry shortly\n",
                     "text/plain; charset=utf-8",
                     static_cast<unsigned>(std::max<std::int64_t>(pages.retry_after.count(), 1)));
    }
    auto* request = new PageRequest{connection, std::string(path), {}, {}};
    mhd().get_connection_values(connection, MHD_GET_ARGUMENT_KIND, &collect_argument,
                                &request->query);
    *con_cls = request;
    mhd().suspend_connection(connection);
    const auto job = [&server, request](const std::atomic<bool>& cancel) {
        try {
            request->page = cancel.load()
                                ? Page{MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain; charset=utf-8",
                                       "the server is stopping\n"}
                                : server.pages().handler(request->path, request->query, cancel);
        } catch (const std::exception& e) {
            request->page = Page{MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8",
                                 std::string(e.what()) + "\n"};
        } catch (...) {
            request->page = Page{MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8",
                                 "internal error\n"};
        }
        server.release_worker();
        mhd().resume_connection(request->connection);
    };
    try {
        server.start_worker(job);
    } catch (...) {
        const std::atomic<bool> stopping{true};
        job(stopping); // no thread: answer at once rather than leave the connection suspended
    }
    return MHD_YES;
}

MHD_Result serve_metrics(MHD_Connection* connection, const HttpServer& server,
                         const char* content_type) {
    auto* holder = new std::shared_ptr<const std::string>(server.current());
    MHD_Response* response = mhd().create_response_from_buffer_with_free_callback_cls(
        (*holder)->size(), const_cast<char*>((*holder)->data()), release_body, holder);
    if (response == nullptr) {
        delete holder;
        return MHD_NO;
    }
    mhd().add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    const MHD_Result result = mhd().queue_response(connection, MHD_HTTP_OK, response);
    mhd().destroy_response(response);
    return result;
}

/// The credentials of a request's Authorization header, checked against basic_auth_users.
bool credentials_match(MHD_Connection* connection, const WebConfig& web) {
    char* password = nullptr;
    char* user = mhd().basic_auth_get_username_password(connection, &password);
    bool ok = false;
    if (user != nullptr && password != nullptr) {
        const auto it = web.users.find(user);
        // An unknown user costs a bcrypt round too, so timing does not tell which names exist.
        static const std::string k_unknown =
            "$2b$10$qqqqqqqqqqqqqqqqqqqqqeZufgmdT/56H8TKOMpgvY1C42WL7bvx6";
        const bool matches =
            password_matches(it != web.users.end() ? it->second : k_unknown, password);
        ok = it != web.users.end() && matches;
    }
    if (password != nullptr) {
        mhd().free(password);
    }
    if (user != nullptr) {
        mhd().free(user);
    }
    return ok;
}

/// Refuses a request the --web-config settings do not allow: 403 without a verified client
/// certificate, 401 (with a Basic challenge) without valid credentials. MHD_YES with `refused`
/// false lets the request through.
MHD_Result authorize(MHD_Connection* connection, const WebConfig& web, bool& refused) {
    refused = true;
    if (web.client_auth == ClientAuth::require_and_verify) {
        const MHD_ConnectionInfo* info =
            mhd().get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
        if (info == nullptr || !peer_certificate_verified(info->tls_session)) {
            return reply(connection, MHD_HTTP_FORBIDDEN,
                         "a verified client certificate is required\n",
                         "text/plain; charset=utf-8");
        }
    }
    if (web.basic_auth() && !credentials_match(connection, web)) {
        constexpr std::string_view body = "unauthorized\n";
        MHD_Response* response = mhd().create_response_from_buffer(
            body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_PERSISTENT);
        if (response == nullptr) {
            return MHD_NO;
        }
        mhd().add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE,
                                  "text/plain; charset=utf-8");
        const MHD_Result result = mhd().queue_basic_auth_fail_response(connection, "gua", response);
        mhd().destroy_response(response);
        return result;
    }
    refused = false;
    return MHD_YES;
}

MHD_Result handle(void* cls, MHD_Connection* connection, const char* url, const char* method,
                  const char* /*version*/, const char* /*upload_data*/,
                  std::size_t* /*upload_data_size*/, void** con_cls) {
    try {
        auto* server = static_cast<HttpServer*>(cls);
        if (*con_cls != nullptr) { // a computed page, resumed by its worker
            const Page& page = static_cast<PageRequest*>(*con_cls)->page;
            return reply(connection, page.status, page.body, page.content_type.c_str());
        }
        bool refused = false;
        if (const MHD_Result r = authorize(connection, server->web(), refused); refused) {
            return r;
        }
        const std::string_view m = method;
        if (m != MHD_HTTP_METHOD_GET && m != MHD_HTTP_METHOD_HEAD) {
            return reply(connection, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n",
                         "text/plain; charset=utf-8");
        }
        const std::string_view path = url;
        if (path == "/metrics") {
            return serve_metrics(connection, *server, server->content_type().c_str());
        }
        if (server->web().metrics_only) {
            return reply(connection, MHD_HTTP_NOT_FOUND,
                         "not found (this server serves only /metrics)\n",
                         "text/plain; charset=utf-8");
        }
        const std::vector<std::string>& paths = server->pages().paths;
        if (server->pages().handler && std::find(paths.begin(), paths.end(), path) != paths.end()) {
            return serve_page(connection, *server, path, con_cls);
        }
        if (path == "/") {
            return reply(connection, MHD_HTTP_OK, k_index_html, "text/html; charset=utf-8");
        }
        return reply(connection, MHD_HTTP_NOT_FOUND, "not found\n", "text/plain; charset=utf-8");
    } catch (...) {
        return MHD_NO;
    }
}

/// The libmicrohttpd options of `web`'s TLS settings, ending with MHD_OPTION_END.
std::vector<MHD_OptionItem> tls_options(const WebConfig& web) {
    std::vector<MHD_OptionItem> items;
    const auto add = [&items](MHD_OPTION option, const std::string& text) {
        items.push_back({option, 0, const_cast<char*>(text.c_str())});
    };
    if (web.tls()) {
        add(MHD_OPTION_HTTPS_MEM_KEY, web.key_pem);
        add(MHD_OPTION_HTTPS_MEM_CERT, web.cert_pem);
        add(MHD_OPTION_HTTPS_PRIORITIES, web.priorities);
        if (!web.client_ca_pem.empty()) {
            add(MHD_OPTION_HTTPS_MEM_TRUST, web.client_ca_pem);
        }
    }
    items.push_back({MHD_OPTION_END, 0, nullptr});
    return items;
}

} // namespace

Result<ListenAddress> parse_listen(std::string_view text) {
    ListenAddress a;
    std::string_view port = text;
    const std::size_t colon = text.rfind(':');
    if (colon != std::string_view::npos) {
        std::string_view host = text.substr(0, colon);
        port = text.substr(colon + 1);
        if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
            host = host.substr(1, host.size() - 2);
        }
        if (host == "localhost") {
            host = "127.0.0.1";
        }
        if (!host.empty()) {
            a.host = std::string(host);
        }
    }
    unsigned char probe[sizeof(in6_addr)];
    const int family = is_ipv6(a.host) ? AF_INET6 : AF_INET;
    if (inet_pton(family, a.host.c_str(), probe) != 1) {
        return Error{fmt::format("--listen {}: the host must be a numeric IPv4 address, "
                                 "[IPv6] or localhost",
                                 text)};
    }
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value > 65535) {
        return Error{fmt::format("--listen {}: expected PORT, HOST:PORT or [IPv6]:PORT", text)};
    }
    a.port = static_cast<std::uint16_t>(value);
    return a;
}

HttpServer::HttpServer(const ListenAddress& address, const HttpLimits& limits,
                       std::string content_type, PageRoutes pages, WebConfig web)
    : m_address(address), m_content_type(std::move(content_type)),
      m_body(std::make_shared<const std::string>()), m_pages(std::move(pages)),
      m_web(std::move(web)) {
    mhd(); // the library before the socket: a missing library leaks nothing
    const int fd = bind_socket(address, limits);
    m_port = bound_port(fd);
    unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME;
    if (is_ipv6(address.host)) {
        flags |= MHD_USE_IPv6;
    }
    const std::vector<MHD_OptionItem> tls = tls_options(m_web);
    if (m_web.tls()) {
        flags |= MHD_USE_TLS;
    }
    m_daemon = mhd().start_daemon(
        flags, 0, nullptr, nullptr, &handle, this, MHD_OPTION_LISTEN_SOCKET, fd,
        MHD_OPTION_CONNECTION_LIMIT, limits.connection_limit, MHD_OPTION_CONNECTION_TIMEOUT,
        limits.timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT, limits.memory_limit_bytes,
        MHD_OPTION_NOTIFY_COMPLETED, &request_completed, nullptr, MHD_OPTION_ARRAY, tls.data(),
        MHD_OPTION_END);
    if (m_daemon == nullptr) {
        close(fd);
        throw Fatal(fmt::format("--listen: cannot start the HTTP server on {}:{}{}", address.host,
                                m_port,
                                m_web.tls() ? " (TLS: check that the certificate and key of "
                                              "--web-config match and are PEM)"
                                            : ""));
    }
}

HttpServer::HttpServer(const HttpLimits& limits, std::string content_type, PageRoutes pages)
    : m_content_type(std::move(content_type)), m_body(std::make_shared<const std::string>()),
      m_pages(std::move(pages)) {
    // poll(), not the epoll of MHD_USE_AUTO_INTERNAL_THREAD: with epoll, libmicrohttpd 0.9.75
    // noticed a client's end of input on an added Unix socket only at the connection timeout.
    m_daemon = mhd().start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC |
            MHD_ALLOW_SUSPEND_RESUME,
        0, nullptr, nullptr, &handle, this, MHD_OPTION_CONNECTION_LIMIT, limits.connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, limits.timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        limits.memory_limit_bytes, MHD_OPTION_NOTIFY_COMPLETED, &request_completed, nullptr,
        MHD_OPTION_END);
    if (m_daemon == nullptr) {
        throw Fatal("cannot start the HTTP server");
    }
}

bool HttpServer::serve_connection(int fd) {
    sockaddr_in peer{}; // a loopback client, as far as the server's logs are concerned
    peer.sin_family = AF_INET;
    peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return mhd().add_connection(m_daemon, fd, reinterpret_cast<const sockaddr*>(&peer),
                                sizeof peer) == MHD_YES;
}

HttpServer::~HttpServer() {
    {
        // A page being computed ends (cancelled) and resumes its connection before the server
        // stops: stopping with a suspended connection is undefined in libmicrohttpd.
        const std::lock_guard<std::mutex> lock(m_worker_mutex);
        m_cancel.store(true);
        if (m_worker.joinable()) {
            m_worker.join();
        }
    }
    mhd().stop_daemon(m_daemon);
}

bool HttpServer::claim_worker() {
    bool idle = false;
    return m_busy.compare_exchange_strong(idle, true);
}

void HttpServer::start_worker(std::function<void(const std::atomic<bool>& cancel)> job) {
    const std::lock_guard<std::mutex> lock(m_worker_mutex);
    if (m_worker.joinable()) {
        m_worker.join(); // the previous page's thread, which has released the worker
    }
    if (m_cancel.load()) {
        job(m_cancel); // stopping: answer at once on this thread
        return;
    }
    m_worker = std::thread([this, job = std::move(job)] { job(m_cancel); });
}

void HttpServer::publish(std::string body) {
    auto fresh = std::make_shared<const std::string>(std::move(body));
    const std::lock_guard<std::mutex> lock(m_mutex);
    m_body = std::move(fresh);
}

std::shared_ptr<const std::string> HttpServer::current() const {
    const std::lock_guard<std::mutex> lock(m_mutex);
    return m_body;
}

std::string HttpServer::url(std::string_view path) const {
    const char* scheme = m_web.tls() ? "https" : "http";
    return is_ipv6(m_address.host)
               ? fmt::format("{}://[{}]:{}{}", scheme, m_address.host, m_port, path)
               : fmt::format("{}://{}:{}{}", scheme, m_address.host, m_port, path);
}

} // namespace gua::exporter
