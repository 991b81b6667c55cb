/* top.c - `stacktreed top`'s refreshed views of the last seconds'
 * functions, see top.h. */
#include "user/output/top.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "common/textesc.h"
#include "common/tree.h"
#include "user/model/functab.h"
#include "user/model/profile.h"
#include "user/model/window.h"
#include "user/output/out_functab.h"
#include "user/output/term.h"

#define HEADER_ROWS 4		/* title, summary, blank, column names */

struct st_top {
	struct st_top_opts o;
	struct st_window *w;
	double next, last;	/* the next view's time, the last one's */
	unsigned views;
	bool tty;		/* stdout is a terminal: views replace each other */
	bool keys;		/* stdin is a terminal in non-canonical mode: 'q' */
	struct termios saved;
};

int st_top__new(struct st_collector *c, const struct st_namer *n, const struct st_top_opts *o,
		double now, struct st_top **out)
{
	struct st_top *t = calloc(1, sizeof(*t));
	struct termios raw;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	t->o = *o;
	t->o.target = o->target ? strdup(o->target) : NULL;
	t->w = st_window__new(c, n, o->event, o->faults, &(struct st_window_filter){ 0 });
	if (!t->w || (o->target && !t->o.target)) {
		st_window__free(t->w);
		free((char *)t->o.target);
		free(t);
		return -ENOMEM;
	}
	t->last = now;
	t->next = now + o->refresh;
	t->tty = isatty(STDOUT_FILENO) == 1;
	if (t->tty && isatty(STDIN_FILENO) == 1 && !tcgetattr(STDIN_FILENO, &t->saved)) {
		raw = t->saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		t->keys = !tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	}
	*out = t;
	return 0;
}

void st_top__free(struct st_top *t)
{
	if (!t)
		return;
	if (t->keys)
		tcsetattr(STDIN_FILENO, TCSANOW, &t->saved);
	st_window__free(t->w);
	free((char *)t->o.target);
	free(t);
}

/* 'q' (or 'Q') typed since the last pass. */
static bool quit_typed(struct st_top *t)
{
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	char buf[64];
	ssize_t n;

	if (!t->keys || poll(&pfd, 1, 0) <= 0)
		return false;
	n = read(STDIN_FILENO, buf, sizeof(buf));
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == 'q' || buf[i] == 'Q')
			return true;
	return false;
}

static size_t threads_with_samples(const struct st_profile *p)
{
	size_t n = 0;

	for (size_t i = 0; i < p->nthreads; i++)
		n += st_thread__samples(p->threads[i]) > 0;
	return n;
}

/* One view of p's functions into out (rows at most). */
static void view(struct st_top *t, const struct st_profile *p, const struct st_functab *ft,
		 FILE *out, size_t rows, double secs)
{
	char when[16];
	time_t now = time(NULL);
	struct tm tm;

	strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&now, &tm));
	fprintf(out, "%s stacktreed top: ", t->tty ? "#" : "===");
	st_textesc__put(out, t->o.target ? t->o.target : "");
	fprintf(out, " - view %u at %s%s\n", t->views, when, t->keys ? " (q quits)" : "");
	fprintf(out, "# the last %.1f s: %" PRIu64 " samples", secs, (uint64_t)ft->samples);
	if (t->o.freq)
		fprintf(out, " at %u Hz", (unsigned)t->o.freq);
	fprintf(out, ", %zu threads; %zu functions\n#\n", threads_with_samples(p), ft->n);
	st_functab__write(ft, out, rows);
}

static int show(struct st_top *t, const struct st_profile *p, double secs)
{
	struct st_functab *ft = st_functab__new(p, 0);
	struct st_term_opts to = { 0 };
	size_t rows = ST_TOP_ROWS;
	FILE *out = stdout;
	struct winsize ws;

	if (!ft)
		return -ENOMEM;
	if (t->tty) {
		st_term__detect(STDOUT_FILENO, false, false, &to);
		if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row > HEADER_ROWS + 2)
			rows = ws.ws_row - HEADER_ROWS - 2;
		fputs("\033[H\033[2J", stdout);	/* home, clear: this view replaces the last */
		if (!(out = st_term__open(stdout, &to))) {
			st_functab__free(ft);
			return -ENOMEM;
		}
	}
	view(t, p, ft, out, rows, secs);
	if (out != stdout)
		fclose(out);
	else
		fputc('\n', out);
	st_functab__free(ft);
	fflush(stdout);
	return ferror(stdout) ? -EIO : 0;
}

int st_top__work(struct st_top *t, double now)
{
	struct st_profile *p;
	int err;

	if (quit_typed(t))
		return 1;
	if (now < t->next)
		return 0;
	if (t->o.drain && (err = t->o.drain(t->o.ctx)))
		return err;
	if (!(p = st_window__take(t->w)))
		return -ENOMEM;
	t->views++;
	err = show(t, p, now - t->last);
	st_profile__free(p);
	/* the trees start again empty: the window forgets its marks first */
	if (!err && (err = st_window__fold(t->w, true)) == 0 && t->o.reset)
		t->o.reset(t->o.ctx);
	t->last = now;
	t->next = now + t->o.refresh;
	if (err == -EPIPE)
		return 1;	/* the reader went away (top | head) */
	if (err)
		return err;
	return t->o.iterations && t->views >= t->o.iterations;
}
