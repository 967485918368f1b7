// The Store contract, run against every adapter: what the API and the sync producer rely on,
// one part per resource (as src/store/contract/ is).
import { describe } from 'vitest';
import { coreContract } from './core.ts';
import { usersContract } from './users.ts';
import { zonesContract } from './zones.ts';
import { ipListsContract } from './iplists.ts';
import { nodesContract } from './nodes.ts';
import { consumersContract } from './consumers.ts';
import { changeFeedContract } from './change-feed.ts';
import { certificatesContract } from './certificates.ts';
import { documentsContract } from './documents.ts';
import { uptimeContract } from './uptime.ts';
import type { OpenStore } from './helpers.ts';

export function storeContract(name: string, open: OpenStore): void {
  describe(`Store contract: ${name}`, () => {
    coreContract(open);
    usersContract(open);
    zonesContract(open);
    ipListsContract(open);
    nodesContract(open);
    consumersContract(open);
    changeFeedContract(open);
    certificatesContract(open);
    documentsContract(open);
    uptimeContract(open);
  });
}
