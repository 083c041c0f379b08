/*
 * unix_peer: the two socket calls Node does not offer, for the control plane's connections to
 * sandboxes (see ../src/index.ts for why).
 *
 *   bindUnix(path)  -> fd (>= 0) of a new AF_UNIX stream socket bound to path, NOT listening;
 *                      -errno on failure. The caller hands it to a sandbox, whose daemon calls
 *                      listen() on it, so the peer credentials connectors read are the daemon's.
 *   peerCred(fd)    -> [pid, uid, gid] of the peer of a connected unix socket (SO_PEERCRED, in
 *                      the reader's namespaces), or -errno.
 *   originalDst(fd) -> [a, b, c, d, port] of an accepted IPv4 TCP connection that netfilter
 *                      redirected (SO_ORIGINAL_DST: where the client meant to connect), or
 *                      -errno (ENOENT: not redirected). The egress point reads it per connection.
 *
 * Node-API is a stable C ABI; its handful of declarations is written out here so the addon
 * builds with a C compiler alone (no node-gyp, no Node headers download: this machine reaches
 * only package registries).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <unistd.h>

typedef struct napi_env__ *napi_env;
typedef struct napi_value__ *napi_value;
typedef struct napi_callback_info__ *napi_callback_info;
typedef int napi_status; /* napi_ok == 0 */
typedef napi_value (*napi_callback)(napi_env env, napi_callback_info info);

extern napi_status napi_get_cb_info(napi_env env, napi_callback_info info, size_t *argc,
                                    napi_value *argv, napi_value *this_arg, void **data);
extern napi_status napi_get_value_int32(napi_env env, napi_value value, int32_t *result);
extern napi_status napi_get_value_string_utf8(napi_env env, napi_value value, char *buf,
                                              size_t bufsize, size_t *result);
extern napi_status napi_create_int32(napi_env env, int32_t value, napi_value *result);
extern napi_status napi_create_array_with_length(napi_env env, size_t length, napi_value *result);
extern napi_status napi_set_element(napi_env env, napi_value object, uint32_t index,
                                    napi_value value);
extern napi_status napi_create_function(napi_env env, const char *name, size_t length,
                                        napi_callback cb, void *data, napi_value *result);
extern napi_status napi_set_named_property(napi_env env, napi_value object, const char *name,
                                           napi_value value);
extern napi_status napi_throw_type_error(napi_env env, const char *code, const char *msg);

static napi_value int_value(napi_env env, int32_t n) {
  napi_value v = NULL;
  napi_create_int32(env, n, &v);
  return v;
}

static napi_value bind_unix(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  struct sockaddr_un addr;
  size_t length = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != 0 || argc < 1) {
    napi_throw_type_error(env, NULL, "bindUnix(path) needs a path");
    return NULL;
  }
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  /* A path that does not fit (with its NUL) is refused rather than cut short. */
  if (napi_get_value_string_utf8(env, argv[0], addr.sun_path, sizeof addr.sun_path, &length) != 0) {
    napi_throw_type_error(env, NULL, "bindUnix(path): path must be a string");
    return NULL;
  }
  if (length == 0 || length >= sizeof addr.sun_path - 1) return int_value(env, -ENAMETOOLONG);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return int_value(env, -errno);
  if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
    int err = errno;
    close(fd);
    return int_value(env, -err);
  }
  return int_value(env, fd);
}

static napi_value peer_cred(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t fd = -1;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != 0 || argc < 1 ||
      napi_get_value_int32(env, argv[0], &fd) != 0) {
    napi_throw_type_error(env, NULL, "peerCred(fd) needs a descriptor");
    return NULL;
  }
  struct ucred cred;
  socklen_t size = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &size) != 0) return int_value(env, -errno);
  napi_value out = NULL;
  napi_create_array_with_length(env, 3, &out);
  napi_set_element(env, out, 0, int_value(env, (int32_t)cred.pid));
  napi_set_element(env, out, 1, int_value(env, (int32_t)cred.uid));
  napi_set_element(env, out, 2, int_value(env, (int32_t)cred.gid));
  return out;
}

/* From linux/netfilter_ipv4.h, written out: that header drags in kernel types. */
#ifndef SO_ORIGINAL_DST
#define SO_ORIGINAL_DST 80
#endif

static napi_value original_dst(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t fd = -1;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != 0 || argc < 1 ||
      napi_get_value_int32(env, argv[0], &fd) != 0) {
    napi_throw_type_error(env, NULL, "originalDst(fd) needs a descriptor");
    return NULL;
  }
  struct sockaddr_in addr;
  socklen_t size = sizeof addr;
  memset(&addr, 0, sizeof addr);
  if (getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, &addr, &size) != 0) return int_value(env, -errno);
  const unsigned char *ip = (const unsigned char *)&addr.sin_addr.s_addr;
  napi_value out = NULL;
  napi_create_array_with_length(env, 5, &out);
  for (uint32_t i = 0; i < 4; i++) napi_set_element(env, out, i, int_value(env, ip[i]));
  napi_set_element(env, out, 4, int_value(env, ntohs(addr.sin_port)));
  return out;
}

static void export_function(napi_env env, napi_value exports, const char *name, napi_callback cb) {
  napi_value fn = NULL;
  napi_create_function(env, name, (size_t)-1, cb, NULL, &fn);
  napi_set_named_property(env, exports, name, fn);
}

__attribute__((visibility("default"))) napi_value napi_register_module_v1(napi_env env,
                                                                          napi_value exports) {
  export_function(env, exports, "bindUnix", bind_unix);
  export_function(env, exports, "peerCred", peer_cred);
  export_function(env, exports, "originalDst", original_dst);
  return exports;
}

/* Node-API version 1 is all this uses. */
__attribute__((visibility("default"))) int32_t node_api_module_get_api_version_v1(void) {
  return 1;
}
