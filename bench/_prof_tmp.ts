import { compileMapping, mapRecord } from '/work/main/src/mapping/engine.js';
import { parseIsoDateTime } from '/work/main/src/mapping/convert.js';
const COUNTRIES = ['DE', 'FR', 'US', 'GB', 'NL'];
const records: unknown[] = [];
const base = Date.UTC(2024, 0, 1);
for (let i = 0; i < 100000; i++) {
  records.push({ no: `C${String(i).padStart(6, '0')}`, name: `Customer ${i}`, contact: { email: `customer${i}@example.com`, phone: `+49 30 ${i}` },
    address: { street: `Main Street ${i}`, city: `City ${i % 997}`, country: COUNTRIES[i%5] }, balance: Math.round(i * 137.31) / 100, active: i % 3 !== 0,
    createdAt: new Date(base + i * 61_000).toISOString().replace('.000Z', '+00:00') });
}
const payload = JSON.stringify(records);
for (let r = 0; r < 3; r++) {
  let t = performance.now(); const parsed = JSON.parse(payload) as any[]; console.log('parse', performance.now() - t);
  t = performance.now(); let x = 0; for (const rec of parsed) { const s = parseIsoDateTime(rec.createdAt); if (s) x++; } console.log('datetime', performance.now() - t);
}
