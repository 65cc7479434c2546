// Preload (`node -r ./force-loopback.cjs ...`) that keeps a Node server on
// loopback: a listen(port) or listen(port, callback) call with no host, which
// Node binds on every interface, gets host 127.0.0.1 added. Used by .ci/run
// for @modelcontextprotocol/server-everything, whose `app.listen(PORT)` names
// no host. Calls that already pass a host (or a path or an options object)
// are left as they are.
'use strict';
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const port = args[0];
  const portOnly = typeof port === 'number' || (typeof port === 'string' && /^\d+$/.test(port));
  if (portOnly && typeof args[1] !== 'string') {
    args.splice(1, 0, '127.0.0.1');
  }
  return listen.apply(this, args);
};
