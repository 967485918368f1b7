// The connection phase's protection: connections per client network, and in all, admitted at
// accept (connection-limits.ts); a refused one is closed before any byte is read.
import type { EdgeParts } from '../stage/parts.ts';
import type { ConnectionStage } from '../stage/stage.ts';

export function connectionLimitStage(parts: EdgeParts): ConnectionStage {
  const { connections, metrics } = parts;
  return {
    phase: 'connection',
    name: 'connections per client and in all → closed at accept',
    accept(socket) {
      const admitted = connections.admit(socket);
      if (!admitted.ok) {
        metrics.blocked(admitted.reason);
        socket.destroy();
        return false;
      }
      metrics.activeConnections++;
      socket.once('close', () => metrics.activeConnections--);
      return true;
    },
  };
}
