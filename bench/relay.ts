/**
 * The bare node:dgram relay the switch is measured against: receives datagrams on one socket and
 * sends each, unchanged, to a fixed target. No decoding, no scheduling: the floor of what one Node
 * process can forward on this machine.
 */
import dgram from 'node:dgram';

const [targetPort] = process.argv.slice(2).map(Number);
const sock = dgram.createSocket({ type: 'udp4', recvBufferSize: 4 << 20, sendBufferSize: 4 << 20 });
sock.on('message', (buf) => sock.send(buf, targetPort, '127.0.0.1'));
sock.bind(0, '127.0.0.1', () => process.send?.({ port: sock.address().port }));
process.on('disconnect', () => process.exit(0));
