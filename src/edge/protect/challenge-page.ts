// The interstitial of the JS challenge: a small page whose Web Worker searches for a nonce such
// that SHA-256(challenge + nonce), in hex, starts with `difficulty` zeros, then sends the browser
// to the verification URL. SHA-256 is computed in plain JavaScript, because WebCrypto exists only
// in secure contexts and a site may still be on plain HTTP.
const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** SHA-256 of an ASCII string, hex: the worker's code (FIPS 180-4). */
const SHA256_JS = `
function sha256(text){var K=[],H=[],i,j,p=2;for(i=0;i<64;p++){for(j=2;j*j<=p;j++)if(p%j===0)break;if(j*j>p){if(i<8)H[i]=(Math.pow(p,1/2)*4294967296)|0;K[i++]=(Math.pow(p,1/3)*4294967296)|0;}}
var bytes=[];for(i=0;i<text.length;i++)bytes.push(text.charCodeAt(i)&255);var bits=bytes.length*8;bytes.push(128);while(bytes.length%64!==56)bytes.push(0);
for(i=7;i>=0;i--)bytes.push(i>3?0:(bits>>>(i*8))&255);var W=new Array(64),h=H.slice();
for(var o=0;o<bytes.length;o+=64){for(i=0;i<16;i++)W[i]=(bytes[o+4*i]<<24)|(bytes[o+4*i+1]<<16)|(bytes[o+4*i+2]<<8)|bytes[o+4*i+3];
for(i=16;i<64;i++){var a=W[i-15],b=W[i-2];W[i]=(((a>>>7|a<<25)^(a>>>18|a<<14)^(a>>>3))+W[i-16]+((b>>>17|b<<15)^(b>>>19|b<<13)^(b>>>10))+W[i-7])|0;}
var A=h[0],B=h[1],C=h[2],D=h[3],E=h[4],F=h[5],G=h[6],Hh=h[7];
for(i=0;i<64;i++){var t1=(Hh+((E>>>6|E<<26)^(E>>>11|E<<21)^(E>>>25|E<<7))+((E&F)^(~E&G))+K[i]+W[i])|0;var t2=(((A>>>2|A<<30)^(A>>>13|A<<19)^(A>>>22|A<<10))+((A&B)^(A&C)^(B&C)))|0;Hh=G;G=F;F=E;E=(D+t1)|0;D=C;C=B;B=A;A=(t1+t2)|0;}
h[0]=(h[0]+A)|0;h[1]=(h[1]+B)|0;h[2]=(h[2]+C)|0;h[3]=(h[3]+D)|0;h[4]=(h[4]+E)|0;h[5]=(h[5]+F)|0;h[6]=(h[6]+G)|0;h[7]=(h[7]+Hh)|0;}
var out='';for(i=0;i<8;i++)out+=('00000000'+(h[i]>>>0).toString(16)).slice(-8);return out;}
onmessage=function(e){var c=e.data.challenge,z='0'.repeat(e.data.difficulty);for(var n=0;;n++){if(sha256(c+n).slice(0,z.length)===z){postMessage(n);return;}}};
`;

export function challengePage(host: string, challenge: string, difficulty: number, verifyPath: string, returnTo: string): string {
  const data = JSON.stringify({ challenge, difficulty, verify: verifyPath, returnTo }).replace(/</g, '\\u003c');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex"><meta name="viewport" content="width=device-width"><title>Checking your browser</title></head>
<body style="font-family:sans-serif;max-width:40em;margin:4em auto"><h1>One moment…</h1><p>Your browser is doing a small computation before it is let through to <b>${escape(host)}</b>. This takes a second or two.</p>
<noscript><p><b>JavaScript is needed to continue:</b> please enable it for this site and reload.</p></noscript>
<p id="status"></p>
<script>
(function(){var d=${data};var w=new Worker(URL.createObjectURL(new Blob([${JSON.stringify(SHA256_JS)}],{type:'text/javascript'})));
var t0=Date.now();w.onmessage=function(e){document.getElementById('status').textContent='Done in '+(Date.now()-t0)+' ms.';
location.replace(d.verify+'?challenge='+encodeURIComponent(d.challenge)+'&nonce='+e.data+'&return='+encodeURIComponent(d.returnTo));};
w.postMessage({challenge:d.challenge,difficulty:d.difficulty});})();
</script><hr><p><small>palisade edge</small></p></body></html>
`;
}

/** The same SHA-256 as the page's (exported for the test that checks it against node:crypto). */
export const pageSha256 = new Function(`${SHA256_JS}; return sha256;`)() as (text: string) => string;
