// The bodies the WAF's cost is measured on (bench/waf-cost.ts), all benign: large ones of each
// kind (1 MB form, JSON, text, multipart), an 18 KB SVG upload as a drawing tool exports it, and
// the sizes real API calls and forms have (a 2 KB JSON order, a 1 KB checkout form). Made from
// fixed text, so every run measures the same bytes.
import { multipart } from '../test/helpers/waf-corpus.ts';

/** What a backend parses the body with: the cost the inspection is compared with. */
export type Baseline = 'json' | 'form' | 'multipart' | 'text';

export interface CostBody {
  name: string;
  body: Buffer;
  contentType: string;
  baseline: Baseline;
}

const WORDS = 'the quick brown fox jumps over the lazy dog and orders 12 items; price is $5 (each) or less, see https://example.org/a?b=c '.split(' ');
const prose = (n: number, seed = 0) => Array.from({ length: n }, (_, i) => WORDS[(i * 7 + seed) % WORDS.length]).join(' ');

/** A checkout API call as a shop's front end sends it (about 2 KB, compact JSON). */
function orderJson(): Buffer {
  const order = {
    order_id: 'ord_8f3k2m9q1x7v',
    created_at: '2026-11-28T18:42:07.512Z',
    currency: 'EUR',
    customer: { id: 'cus_51Hk2LmN8pQ', email: 'maria.gonzalez@example.com', name: 'María González Ruiz', phone: '+34 612 345 678', locale: 'es-ES', marketing_opt_in: false },
    shipping: {
      method: 'express',
      address: { line1: 'Calle de Alcalá 42, 3º B', line2: '', city: 'Madrid', region: 'Madrid', postal_code: '28014', country: 'ES' },
      instructions: "If I'm not home, please leave the parcel with the concierge (ground floor) — thanks!",
    },
    billing: { same_as_shipping: true, vat_id: 'ESB12345678' },
    items: [
      { sku: 'TSH-ORG-M-NAVY', name: 'Organic cotton T-shirt, navy (M)', quantity: 2, unit_price: 24.9, options: { size: 'M', colour: 'navy' }, gift_wrap: false },
      { sku: 'MUG-350-WHT', name: 'Ceramic mug 350 ml — "Good morning"', quantity: 1, unit_price: 12.5, options: { engraving: 'Para Lucía ♥' }, gift_wrap: true },
      { sku: 'BAG-TOTE-NAT', name: 'Canvas tote bag (natural)', quantity: 1, unit_price: 9.95, options: {}, gift_wrap: false },
    ],
    discounts: [{ code: 'WINTER-10', type: 'percent', amount: 10 }],
    totals: { subtotal: 72.25, discount: 7.23, shipping: 5.9, tax: 14.89, total: 85.81 },
    payment: { method: 'card', token: 'tok_1NxYzA2eZvKYlo2C8dF3gH4j', brand: 'visa', last4: '4242', three_d_secure: true },
    note: 'Birthday present: could you leave out the invoice from the box? Send it by e-mail instead, please.',
    client: { user_agent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15', referrer: 'https://shop.example.com/cart?step=2', ip_country: 'ES' },
    utm: { source: 'newsletter', medium: 'email', campaign: 'black-friday-2026', content: 'hero-button' },
    consents: { terms: true, privacy: true, version: '2026-09' },
    experiments: [{ key: 'checkout-one-page', variant: 'B' }, { key: 'free-shipping-threshold', variant: 'control' }],
    session: { id: 'sess_0c9a7e1b6f', started_at: '2026-11-28T18:21:44Z', pages: 7 },
  };
  return Buffer.from(JSON.stringify(order));
}

/** A checkout form as a browser sends it (about 1 KB, urlencoded). */
function checkoutForm(): Buffer {
  const fields: Array<[string, string]> = [
    ['csrf_token', 'kV3pX9sQ2mLw8ZrT1yHc6bN4fJd0gAeU7oPiKxRt5vY='],
    ['first_name', 'Jean-Luc'],
    ['last_name', "O'Connor"],
    ['email', 'jl.oconnor+shop@example.net'],
    ['phone', '+33 6 12 34 56 78'],
    ['address1', '17, rue des Écoles'],
    ['address2', 'Bâtiment C, 2e étage'],
    ['city', 'Paris'],
    ['postcode', '75005'],
    ['country', 'FR'],
    ['delivery', 'standard'],
    ['delivery_note', 'Code de la porte : 4821B. Merci de sonner deux fois (the bell is broken on weekends).'],
    ['gift_message', 'Happy birthday, Claire! Hope you like it :) — love, J.'],
    ['newsletter', 'on'],
    ['terms', '1'],
    ['payment_method', 'card'],
    ['cart[0][sku]', 'BK-4471-FR'],
    ['cart[0][qty]', '1'],
    ['cart[1][sku]', 'PN-0021-BL'],
    ['cart[1][qty]', '3'],
    ['coupon', 'WELCOME15'],
    ['company', 'Atelier Lumière SARL'],
    ['vat_number', 'FR40303265045'],
    ['how_did_you_hear', 'A friend recommended you; also saw the ad on Instagram & liked the reviews.'],
    ['remember_me', '1'],
    ['return_url', 'https://shop.example.com/checkout/complete?order=58213&lang=fr'],
  ];
  return Buffer.from(fields.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v).replace(/%20/g, '+')}`).join('&'));
}

/** An 18 KB SVG drawing as an editor saves it (metadata, gradients, styles, long path data), uploaded with a caption. */
function svgUpload(): { body: Buffer; contentType: string } {
  const paths: string[] = [];
  for (let i = 0, size = 0; size < 15_500; i++) {
    const d: string[] = [`M${(i * 37) % 512}.${i % 10},${(i * 53) % 512}.${(i * 3) % 10}`];
    for (let k = 0; k < 18; k++) d.push(`c${((i + k) * 13) % 40 - 20}.${k},${((i * k) % 30) - 15}.${(k * 7) % 10} ${((i + 2 * k) % 50) - 25},${(k % 9) - 4}.5 ${((i * 5 + k) % 60) - 30}.25,${((k * 11) % 40) - 20}`);
    const path = `    <path id="path${1200 + i}" style="fill:url(#grad${i % 3});fill-opacity:0.${(i % 9) + 1};stroke:#1a2b3c;stroke-width:${(i % 4) + 0.5};stroke-linecap:round;stroke-linejoin:round" d="${d.join(' ')}z" inkscape:connector-curvature="0" />\n`;
    paths.push(path);
    size += path.length;
  }
  const svg = `<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!-- Created with Inkscape (http://www.inkscape.org/) -->
<svg width="512" height="512" viewBox="0 0 512 512" version="1.1" id="svg8" xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:inkscape="http://www.inkscape.org/namespaces/inkscape" xmlns:sodipodi="http://sodipodi.sourceforge.net/DTD/sodipodi-0.dtd" xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:cc="http://creativecommons.org/ns#" xmlns:dc="http://purl.org/dc/elements/1.1/" sodipodi:docname="mountain-logo.svg" inkscape:version="1.3.2 (091e20e, 2023-11-25)">
  <title id="title1">Mountain logo</title>
  <metadata id="metadata5"><rdf:RDF><cc:Work rdf:about=""><dc:format>image/svg+xml</dc:format><dc:type rdf:resource="http://purl.org/dc/dcmitype/StillImage" /><dc:creator><cc:Agent><dc:title>Studio North</dc:title></cc:Agent></dc:creator></cc:Work></rdf:RDF></metadata>
  <sodipodi:namedview id="base" pagecolor="#ffffff" bordercolor="#666666" borderopacity="1.0" inkscape:zoom="1.4" inkscape:cx="256" inkscape:cy="256" inkscape:document-units="px" showgrid="false" />
  <defs id="defs2">
    <linearGradient id="grad0" x1="0" y1="0" x2="0" y2="1"><stop offset="0" style="stop-color:#3a7bd5;stop-opacity:1" /><stop offset="1" style="stop-color:#00d2ff;stop-opacity:1" /></linearGradient>
    <linearGradient id="grad1" x1="0" y1="0" x2="1" y2="1"><stop offset="0" style="stop-color:#f7971e" /><stop offset="1" style="stop-color:#ffd200" /></linearGradient>
    <radialGradient id="grad2" cx="0.5" cy="0.5" r="0.5"><stop offset="0" style="stop-color:#ffffff;stop-opacity:0.8" /><stop offset="1" style="stop-color:#ffffff;stop-opacity:0" /></radialGradient>
  </defs>
  <g inkscape:label="Layer 1" inkscape:groupmode="layer" id="layer1" transform="translate(0,-0.5)">
${paths.join('')}    <text x="256" y="480" style="font-family:'Source Sans Pro',sans-serif;font-size:36px;text-anchor:middle;fill:#1a2b3c">North &amp; Co.</text>
  </g>
</svg>
`;
  return multipart({ caption: 'New logo, final version (v3)', album: 'brand' }, { field: 'file', name: 'mountain-logo.svg', type: 'image/svg+xml', bytes: Buffer.from(svg) });
}

/** A 1 MB multipart form: text fields and a CSV file part. */
function largeMultipart(): { body: Buffer; contentType: string } {
  const fields: Record<string, string> = {};
  for (let i = 0; i < 40; i++) fields[`note_${i}`] = prose(200, i);
  const rows = ['id,name,email,city,amount,comment'];
  for (let i = 0, size = 0; size < 900_000; i++) {
    const row = `${i},Customer ${i},customer${i}@example.org,${['Berlin', 'Lyon', 'Porto', 'Gent'][i % 4]},${(i * 7.31).toFixed(2)},"${prose(8, i)}"`;
    rows.push(row);
    size += row.length + 1;
  }
  return multipart(fields, { field: 'import', name: 'customers.csv', type: 'text/csv', bytes: Buffer.from(rows.join('\n')) });
}

export function costBodies(): CostBody[] {
  const big = largeMultipart();
  const svg = svgUpload();
  return [
    { name: 'form (1 MB)', body: Buffer.from(Array.from({ length: 1000 }, (_, i) => `f${i}=${encodeURIComponent(prose(170, i))}`).join('&')), contentType: 'application/x-www-form-urlencoded', baseline: 'form' },
    { name: 'JSON (1 MB)', body: Buffer.from(JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ id: i, name: `item ${i}`, text: prose(80, i), tags: ['a', 'b'] })))), contentType: 'application/json', baseline: 'json' },
    { name: 'text (1 MB)', body: Buffer.from(Array.from({ length: 8000 }, (_, i) => prose(22, i)).join('\n')), contentType: 'text/plain', baseline: 'text' },
    { name: 'multipart (1 MB)', body: big.body, contentType: big.contentType, baseline: 'multipart' },
    { name: 'SVG upload (18 KB)', body: svg.body, contentType: svg.contentType, baseline: 'multipart' },
    { name: 'JSON API call (2 KB)', body: orderJson(), contentType: 'application/json', baseline: 'json' },
    { name: 'form (1 KB)', body: checkoutForm(), contentType: 'application/x-www-form-urlencoded', baseline: 'form' },
  ];
}
