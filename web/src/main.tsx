import { render } from 'preact';
import './styles.css';
import { App } from './app';
import { startRouter } from './lib/router';

startRouter();
render(<App />, document.getElementById('app')!);
