// Entry of the browser bundle (build.mjs → dist/app/main-<hash>.js and .css).
import { render } from 'preact';
import { App } from './app';
import './styles.css';

render(<App />, document.getElementById('root')!);
