/* The pod sandbox ("pause") container of the real-node test cluster (scripts/images/build.mjs
 * builds it as localhost/cubicle/pause, containerd's sandbox_image): it holds the Pod's namespaces,
 * reaps zombies and exits on SIGINT/SIGTERM. Ours, so no registry image is needed. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void quit(int sig) { (void)sig; _exit(0); }

static void reap(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  struct sigaction stop = {.sa_handler = quit}, child = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP};
  sigaction(SIGINT, &stop, NULL);
  sigaction(SIGTERM, &stop, NULL);
  sigaction(SIGCHLD, &child, NULL);
  for (;;) pause();
  return 0;
}
