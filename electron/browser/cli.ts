import { main } from './run-browser-host';

void main(process.argv.slice(2));
