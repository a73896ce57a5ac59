;;; claude-bridge-test.el --- ERT tests of claude-bridge.el  -*- lexical-binding: t; -*-

;;; Commentary:

;; Run from pytest (tests/editors/emacs), which starts the fake Messages
;; API and sets the environment: HOME (isolated), ANTHROPIC_BASE_URL and
;; the other offline variables, CLAUDE_BRIDGE_TEST_COMMAND (the bridge
;; command as a JSON array), CLAUDE_BRIDGE_TEST_TMP (a scratch directory)
;; and CLAUDE_BRIDGE_TEST_API (the fake API's URL).  Every test drives
;; the real bridge and the real claude CLI; prompts are answered by
;; replacing `read-multiple-choice' and friends, so the package's own
;; prompt path runs.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'url)
(require 'claude-bridge)

(defvar url-http-end-of-headers)

(defconst cbt-wait-seconds 60
  "Safety net of every wait; each returns as soon as its condition holds.")

(setq claude-bridge-command
      (append (json-parse-string (or (getenv "CLAUDE_BRIDGE_TEST_COMMAND")
                                     "[\"claude-bridge\"]"))
              nil))

(defun cbt-wait (what pred &optional seconds)
  "Wait until PRED returns non-nil and return its value; fail naming WHAT."
  (let ((deadline (+ (float-time) (or seconds cbt-wait-seconds)))
        value)
    (while (and (not (setq value (funcall pred))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (or value (ert-fail (list "timed out waiting for" what)))))

(defun cbt-project ()
  "Return a new empty project directory (absolute, resolved, with a slash)."
  (let ((root (or (getenv "CLAUDE_BRIDGE_TEST_TMP") temporary-file-directory)))
    (file-name-as-directory
     (file-truename (make-temp-file (expand-file-name "project-" root) t)))))

(defun cbt-session (buffer)
  "Return the session of chat BUFFER."
  (buffer-local-value 'claude-bridge--session buffer))

(defun cbt-state (buffer)
  "Return the state of chat BUFFER's session."
  (claude-bridge-session-state (cbt-session buffer)))

(defun cbt-wait-idle (buffer)
  "Wait until the session of BUFFER is idle (started, or its turn ended)."
  (cbt-wait "an idle session"
            (lambda () (and (eq (cbt-state buffer) 'idle)
                            (null (claude-bridge-session-dirty (cbt-session buffer)))
                            (progn (claude-bridge--flush (cbt-session buffer)) t)))))

(defun cbt-turn (buffer prompt)
  "Send PROMPT in chat BUFFER and wait until the turn ends; return its result."
  (let ((session (cbt-session buffer)))
    (setf (claude-bridge-session-last-result session) nil)
    (claude-bridge-send prompt session)
    (cbt-wait (format "the end of turn %S" prompt)
              (lambda () (and (claude-bridge-session-last-result session)
                              (eq (claude-bridge-session-state session) 'idle))))
    (claude-bridge--flush session)
    (claude-bridge-session-last-result session)))

(defmacro cbt-with-chat (spec &rest body)
  "Run BODY with (BUFFER DIR) of SPEC bound to a started chat of a new project."
  (declare (indent 1))
  `(let* ((,(cadr spec) (cbt-project))
          (,(car spec) (claude-bridge-chat ,(cadr spec))))
     (unwind-protect
         (progn (cbt-wait-idle ,(car spec)) ,@body)
       (when (buffer-live-p ,(car spec)) (kill-buffer ,(car spec))))))

(defun cbt-api (method path &optional body)
  "Call the fake API with METHOD on PATH, sending BODY (a JSON string)."
  (let* ((url-request-method method)
         (url-request-extra-headers '(("Content-Type" . "application/json")))
         (url-request-data (and body (encode-coding-string body 'utf-8)))
         (buffer (url-retrieve-synchronously
                  (concat (getenv "CLAUDE_BRIDGE_TEST_API") path) t nil 10)))
    (unwind-protect
        (with-current-buffer buffer
          (goto-char url-http-end-of-headers)
          (json-parse-buffer :object-type 'plist :null-object nil :false-object nil))
      (kill-buffer buffer))))

(defun cbt-enqueue (&rest scripts)
  "Queue SCRIPTS (plists in the fake API's JSON form) for the next model calls."
  (cbt-api "POST" "/_fake/enqueue" (json-serialize (vconcat scripts))))

(defun cbt-last-request ()
  "Return the body of the last main /v1/messages request the fake API got."
  (let ((requests (cbt-api "GET" "/_fake/requests")))
    (aref requests (1- (length requests)))))

(defun cbt-items (buffer kind)
  "Return the items of KIND in chat BUFFER's session, oldest first."
  (cl-remove-if-not (lambda (i) (eq (claude-bridge-item-kind i) kind))
                    (claude-bridge-model-items (cbt-session buffer))))

(defun cbt-item-region (buffer item)
  "Return the text chat BUFFER shows for ITEM."
  (with-current-buffer buffer
    (buffer-substring-no-properties (claude-bridge-item-start item)
                                    (claude-bridge-item-end item))))

(defun cbt-buffer-text (buffer)
  "Return the whole text of BUFFER."
  (with-current-buffer buffer (buffer-substring-no-properties (point-min) (point-max))))

(defun cbt-answer (key)
  "A `read-multiple-choice' replacement that picks KEY and records the prompt."
  (lambda (prompt choices &rest _)
    (push prompt cbt--prompts)
    (or (assq key choices) (ert-fail (list "no choice" key "in" choices)))))

(defvar cbt--prompts nil "Prompts shown by `cbt-answer', newest first.")

(defun cbt-alive-p (pid)
  "Return non-nil while PID runs (a zombie is not running)."
  (let ((attrs (process-attributes pid)))
    (and attrs (not (equal (alist-get 'state attrs) "Z")))))

;;;; The model, without drawing

(ert-deftest claude-bridge-test-model-accumulates-deltas-and-tool-cards ()
  (let ((s (claude-bridge-model-make-session "/tmp/")))
    (dolist (chunk '("Hel" "lo " "world"))
      (claude-bridge-model-apply s (list :type "textDelta" :text chunk :index 0)))
    (claude-bridge-model-apply s '(:type "assistantText" :text "Hello world"))
    (claude-bridge-model-apply s '(:type "toolUse" :toolUseId "t1" :name "Bash"
                                         :input (:command "ls -la\nmore")))
    (claude-bridge-model-apply s '(:type "toolResult" :toolUseId "t1" :content "a b"
                                         :isError :json-false))
    (let ((items (claude-bridge-model-items s)))
      (should (equal (mapcar #'claude-bridge-item-kind items) '(text tool)))
      (should (equal (claude-bridge-model-item-text (car items)) "Hello world"))
      (should (equal (claude-bridge-item-text (cadr items)) "Bash: ls -la"))
      (should (equal (plist-get (claude-bridge-item-props (cadr items)) :result) "a b"))
      (should-not (plist-get (claude-bridge-item-props (cadr items)) :error)))
    (should (= (claude-bridge-session-deltas s) 3))))

(ert-deftest claude-bridge-test-model-final-block-corrects-deltas ()
  (let ((s (claude-bridge-model-make-session "/tmp/")))
    (claude-bridge-model-apply s '(:type "textDelta" :text "partial"))
    (claude-bridge-model-apply s '(:type "assistantText" :text "partial, cut" :aborted t))
    (should (equal (claude-bridge-model-assistant-text s) "partial, cut"))))

(ert-deftest claude-bridge-test-model-keeps-drawn-chunks-without-copying ()
  (let ((s (claude-bridge-model-make-session "/tmp/")))
    (dolist (chunk '("ab" "cd"))
      (claude-bridge-model-apply s (list :type "textDelta" :text chunk)))
    (let ((item (car (claude-bridge-model-items s))))
      (should (equal (claude-bridge-model-mark-seen item) '("cd" "ab")))
      (claude-bridge-model-apply s '(:type "textDelta" :text "é!"))
      (claude-bridge-model-apply s '(:type "assistantText" :text "abcdé!"))
      (should-not (plist-get (claude-bridge-item-props item) :redraw))
      (should (equal (claude-bridge-model-item-text item) "abcdé!")))))

;;;; Drawing, without a bridge

(ert-deftest claude-bridge-test-thinking-and-tool-calls-fold-and-unfold ()
  (let ((buf (claude-bridge--setup-buffer (cbt-project))))
    (unwind-protect
        (let ((s (cbt-session buf)))
          (claude-bridge-model-apply s '(:type "thinkingDelta" :thinking "Let me see."))
          (claude-bridge-model-apply s '(:type "thinking" :thinking "Let me see. Yes."))
          (claude-bridge-model-apply s '(:type "toolUse" :toolUseId "t1" :name "Bash"
                                               :input (:command "ls")))
          (claude-bridge-model-apply s '(:type "toolResult" :toolUseId "t1"
                                               :content "a.txt\nb.txt"))
          (claude-bridge--flush s)
          (let ((text (cbt-buffer-text buf)))
            (should (string-match-p "▸ Thinking\n▸ Bash: ls ✓\n" text))
            (should-not (string-match-p "Let me see\\|b\\.txt" text)))
          (with-current-buffer buf
            (goto-char (point-min))
            (search-forward "Thinking")
            (claude-bridge-toggle-section)
            (search-forward "Bash: ls")
            (claude-bridge-toggle-section))
          (let ((text (cbt-buffer-text buf)))
            (should (string-match-p "▾ Thinking\nLet me see\\. Yes\\." text))
            (should (string-match-p "▾ Bash: ls ✓\n  input: {\"command\":\"ls\"}\n  result:\n    a.txt\n    b.txt"
                                    text)))
          (with-current-buffer buf     ; the conversation is read-only, the prompt is not
            (goto-char (point-min))
            (should-error (insert "x") :type 'text-read-only)
            (search-forward "Bash")
            (should-error (insert "x") :type 'text-read-only)
            (goto-char (point-max))
            (insert "my prompt")
            (should (equal (claude-bridge--take-input) "my prompt"))))
      (kill-buffer buf))))

(ert-deftest claude-bridge-test-doctor-reports-a-working-setup ()
  (let* ((buf (claude-bridge-doctor))
         (proc (get-buffer-process buf)))
    (cbt-wait "the doctor's report" (lambda () (not (process-live-p proc))))
    (should (= (process-exit-status proc) 0))
    (should (string-match-p "2\\.1\\.[0-9]+" (cbt-buffer-text buf)))))

;;;; Streaming

(ert-deftest claude-bridge-test-turn-streams-exact-text ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (let ((text "Hello, Emacs!\nLine two — ünïcödé ✓\n```\n(code)\n```\nend"))
      (cbt-enqueue (list :text text :chunkSize 3 :delay 0.02))
      (let ((result (cbt-turn buf "stream please")))
        (should (equal (plist-get result :text) text)))
      (let ((session (cbt-session buf))
            (item (car (last (cbt-items buf 'text)))))
        (should (> (claude-bridge-session-deltas session) 1))
        (should (equal (claude-bridge-model-assistant-text session) text))
        (should (equal (cbt-item-region buf item) text))
        (should (string-match-p "❯ stream please" (cbt-buffer-text buf)))
        (should (string-match-p "── .* this turn · \\$" (cbt-buffer-text buf)))))))

;;;; Garbage collection while streaming

(ert-deftest claude-bridge-test-gc-threshold-is-raised-while-a-turn-streams-then-restored ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (let ((gc-cons-threshold 800000)
          (claude-bridge-streaming-gc-cons-threshold (* 32 1024 1024))
          (session (cbt-session buf))
          (slow (cbt-slow-text 20))
          seen)
      (cbt-enqueue slow)
      (claude-bridge-send "talk slowly" session)
      (cbt-wait "some streamed words" (lambda () (> (claude-bridge-session-deltas session) 2)))
      (setq seen gc-cons-threshold)
      (cbt-wait "the end of the turn"
                (lambda () (eq (claude-bridge-session-state session) 'idle)))
      (should (= seen (* 32 1024 1024)))
      (should (= gc-cons-threshold 800000)))))

(ert-deftest claude-bridge-test-gc-threshold-left-alone-when-the-option-is-nil ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (let ((gc-cons-threshold 800000)
          (claude-bridge-streaming-gc-cons-threshold nil)
          (session (cbt-session buf))
          seen)
      (cbt-enqueue (cbt-slow-text 10))
      (claude-bridge-send "talk slowly" session)
      (cbt-wait "some streamed words" (lambda () (> (claude-bridge-session-deltas session) 2)))
      (setq seen gc-cons-threshold)
      (cbt-wait "the end of the turn"
                (lambda () (eq (claude-bridge-session-state session) 'idle)))
      (should (= seen 800000)))))

;;;; Sending before the session is up

(ert-deftest claude-bridge-test-prompt-sent-while-starting-goes-once-it-is-up ()
  (let* ((dir (cbt-project))
         (buf (claude-bridge-chat dir)))
    (unwind-protect
        (let ((session (cbt-session buf)))
          (should (eq (claude-bridge-session-state session) 'starting))
          (claude-bridge-send "early bird" session)
          (cbt-wait "the end of the turn"
                    (lambda () (claude-bridge-session-last-result session)))
          (claude-bridge--flush session)
          (should (equal (plist-get (claude-bridge-session-last-result session) :text)
                         "Echo: early bird"))
          (should (= (length (cbt-items buf 'user)) 1))
          (should-not (string-match-p "waiting for Claude" (cbt-buffer-text buf))))
      (kill-buffer buf))))

;;;; Permissions

(ert-deftest claude-bridge-test-permission-allow-runs-the-tool ()
  (cbt-with-chat (buf dir)
    (let ((cbt--prompts nil))
      (cl-letf (((symbol-function 'read-multiple-choice) (cbt-answer ?a)))
        (cbt-turn buf "please USE_BASH"))
      (should (= (length cbt--prompts) 1))
      (should (string-match-p "Bash: touch" (car cbt--prompts)))
      (should (file-exists-p (expand-file-name "made-by-bash" dir)))
      (let ((tool (car (cbt-items buf 'tool))))
        (should (equal (plist-get (claude-bridge-item-props tool) :result)
                       "hello-from-bash")))
      (should (string-match-p "Permission asked: Bash: .* — allowed" (cbt-buffer-text buf))))))

(ert-deftest claude-bridge-test-permission-deny-keeps-the-tool-from-running ()
  (cbt-with-chat (buf dir)
    (cl-letf (((symbol-function 'read-multiple-choice) (cbt-answer ?d))
              ((symbol-function 'read-string) (lambda (&rest _) "not on my machine")))
      (cbt-turn buf "please USE_BASH"))
    (should-not (file-exists-p (expand-file-name "made-by-bash" dir)))
    (let ((props (claude-bridge-item-props (car (cbt-items buf 'tool)))))
      (should (plist-get props :error))
      (should (string-match-p "not on my machine" (plist-get props :result))))))

(ert-deftest claude-bridge-test-edit-permission-shows-a-diff-first ()
  (cbt-with-chat (buf dir)
    (let ((file (expand-file-name "notes.txt" dir))
          diff-text diff-mode-p)
      (with-temp-file file (insert "hello world\n"))
      (cl-letf (((symbol-function 'read-multiple-choice)
                 (lambda (_prompt choices &rest _)
                   (with-current-buffer "*claude-bridge diff*"
                     (setq diff-text (buffer-string)
                           diff-mode-p (derived-mode-p 'diff-mode)))
                   (assq ?a choices))))
        (cbt-turn buf "please USE_EDIT"))
      (should diff-mode-p)
      (should (string-match-p "^-hello world$" diff-text))
      (should (string-match-p "^\\+goodbye world$" diff-text))
      (should (equal (with-temp-buffer (insert-file-contents file) (buffer-string))
                     "goodbye world\n")))))

(ert-deftest claude-bridge-test-prompt-left-open-is-answered-later ()
  (cbt-with-chat (buf dir)
    (let ((session (cbt-session buf)))
      (cl-letf (((symbol-function 'read-multiple-choice) (cbt-answer ?l)))
        (claude-bridge-send "please USE_BASH" session)
        (cbt-wait "a pending permission request"
                  (lambda () (claude-bridge-session-permissions session)))
        (accept-process-output nil 0.3))
      (should (eq (claude-bridge-session-state session) 'running))
      (should-not (file-exists-p (expand-file-name "made-by-bash" dir)))
      (cl-letf (((symbol-function 'read-multiple-choice) (cbt-answer ?a)))
        (with-current-buffer buf (claude-bridge-answer-permission)))
      (cbt-wait "the end of the turn" (lambda () (eq (claude-bridge-session-state session) 'idle)))
      (should (file-exists-p (expand-file-name "made-by-bash" dir))))))

(ert-deftest claude-bridge-test-permission-function-answers-without-asking ()
  (cbt-with-chat (buf dir)
    (let ((claude-bridge-permission-functions
           (list (lambda (_session request)
                   (when (equal (plist-get request :toolName) "Bash")
                     '(:behavior "allow"))))))
      (cl-letf (((symbol-function 'read-multiple-choice)
                 (lambda (&rest _) (ert-fail "the user was asked"))))
        (cbt-turn buf "please USE_BASH")))
    (should (file-exists-p (expand-file-name "made-by-bash" dir)))))

(ert-deftest claude-bridge-test-ask-user-question-answers-with-completing-read ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (let (asked)
      (cl-letf (((symbol-function 'completing-read)
                 (lambda (prompt table &rest _)
                   (push (cons prompt (all-completions "" table)) asked)
                   "Blue")))
        (cbt-turn buf "ASKQ"))
      (should (equal (cdar asked) '("Red" "Blue")))
      (should (string-match-p "Which colour" (caar asked)))
      (let ((result (plist-get (claude-bridge-item-props (car (cbt-items buf 'tool)))
                               :result)))
        (should (string-match-p "Blue" result))))))

;;;; Running turns

(defun cbt-slow-text (words)
  "A fake API script streaming WORDS words, 50 ms apart."
  (list :text (mapconcat (lambda (i) (format "w%d " i)) (number-sequence 0 (1- words)) "")
        :delay 0.05))

(ert-deftest claude-bridge-test-interrupt-keeps-the-same-process ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (let* ((session (cbt-session buf))
           (pid (claude-bridge-session-pid session)))
      (cbt-enqueue (cbt-slow-text 200))
      (claude-bridge-send "talk slowly" session)
      (cbt-wait "some streamed words" (lambda () (> (claude-bridge-session-deltas session) 3)))
      (with-current-buffer buf (claude-bridge-interrupt))
      (cbt-wait "the interrupted turn's end"
                (lambda () (eq (claude-bridge-session-state session) 'idle)))
      (should (eq (plist-get (claude-bridge-session-last-result session) :interrupted) t))
      (should (string-match-p "interrupted" (cbt-buffer-text buf)))
      (should (equal (plist-get (cbt-turn buf "still there?") :text) "Echo: still there?"))
      (should (equal (plist-get (claude-bridge-client-call-sync
                                 "session/status"
                                 (list :sessionId (claude-bridge-session-id session)))
                                :pid)
                     pid))
      (should (cbt-alive-p pid)))))

(ert-deftest claude-bridge-test-live-message-during-a-slow-turn-gets-its-answer ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (let ((session (cbt-session buf))
          (slow (cbt-slow-text 30)))
      (cbt-enqueue slow)
      (claude-bridge-send "talk slowly" session)
      (cbt-wait "some streamed words" (lambda () (> (claude-bridge-session-deltas session) 2)))
      (should (eq (claude-bridge-session-state session) 'running))
      (claude-bridge-send "and one more thing" session)
      (cbt-wait "the end of the turn"
                (lambda () (eq (claude-bridge-session-state session) 'idle)))
      (claude-bridge--flush session)
      (should (= (plist-get (claude-bridge-session-last-result session) :results) 2))
      (should (string-match-p "Echo: and one more thing" (cbt-buffer-text buf)))
      ;; The reply went on in place while the message waited below it: once, whole.
      (should (equal (cbt-item-region buf (car (cbt-items buf 'text)))
                     (plist-get slow :text)))
      (with-current-buffer buf
        (should (= (how-many "\\bw0 " (point-min) (point-max)) 1))))))

(ert-deftest claude-bridge-test-model-and-permission-mode-switches ()
  (cbt-with-chat (buf dir)
    (let ((session (cbt-session buf)))
      (claude-bridge-set-model "claude-haiku-4-5" session)
      (cbt-wait "the model switch"
                (lambda () (equal (claude-bridge-session-model session) "claude-haiku-4-5")))
      (cbt-turn buf "which model?")
      (should (equal (plist-get (cbt-last-request) :model) "claude-haiku-4-5"))
      (claude-bridge-set-permission-mode "acceptEdits" session)
      (cbt-wait "the mode switch"
                (lambda () (equal (claude-bridge-session-permission-mode session)
                                  "acceptEdits")))
      (cl-letf (((symbol-function 'read-multiple-choice)
                 (lambda (&rest _) (ert-fail "acceptEdits asked about a Write"))))
        (cbt-turn buf "please USE_WRITE"))
      (should (file-exists-p (expand-file-name "written.txt" dir)))
      (should (string-match-p "claude-haiku-4-5|idle" (with-current-buffer buf
                                                       (claude-bridge-lighter)))))))

(ert-deftest claude-bridge-test-send-region-sends-file-and-lines ()
  (cbt-with-chat (buf dir)
    (let ((file (expand-file-name "code.py" dir)))
      (with-temp-file file (insert "a = 1\nb = 2\nc = 3\n"))
      (with-current-buffer (find-file-noselect file)
        (unwind-protect
            (progn
              (goto-char (point-min))
              (forward-line 1)
              (claude-bridge-send-region (point) (point-max) "what is b?")
              (cbt-wait "the end of the turn"
                        (lambda () (and (claude-bridge-session-last-result (cbt-session buf))
                                        (eq (cbt-state buf) 'idle)))))
          (kill-buffer)))
      (should (string-match-p "code.py, lines 2-3:\n```python\nb = 2\nc = 3\n```\n\nwhat is b\\?"
                              (plist-get (claude-bridge-session-last-result (cbt-session buf))
                                         :text))))))

(ert-deftest claude-bridge-test-sessions-lists-the-chat ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (let ((ids (mapcar (lambda (s) (plist-get s :sessionId)) (claude-bridge-sessions))))
      (should (member (claude-bridge-session-id (cbt-session buf)) ids)))))

(ert-deftest claude-bridge-test-turn-done-hook-gets-the-result ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (let* ((seen nil)
           (claude-bridge-turn-done-hook
            (list (lambda (_session result) (push (plist-get result :text) seen)))))
      (cbt-turn buf "hook me")
      (should (equal seen '("Echo: hook me"))))))

(ert-deftest claude-bridge-test-api-error-is-shown-and-the-chat-goes-on ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (let ((result (cbt-turn buf "please API_ERROR")))
      (should (eq (plist-get result :isError) t))
      (should (string-match-p "⚠ Error: " (cbt-buffer-text buf)))
      (should (equal (plist-get (cbt-turn buf "better now?") :text) "Echo: better now?")))))

(ert-deftest claude-bridge-test-close-then-the-next-prompt-reopens ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (let* ((session (cbt-session buf))
           (pid (claude-bridge-session-pid session)))
      (with-current-buffer buf (claude-bridge-close))
      (should (eq (claude-bridge-session-state session) 'closed))
      (cbt-wait "the CLI's end" (lambda () (not (cbt-alive-p pid))))
      (claude-bridge--flush session)
      (should (string-match-p "⚠ Session closed\\." (cbt-buffer-text buf)))
      (should (equal (plist-get (cbt-turn buf "again") :text) "Echo: again")))))

;;;; Resume

(ert-deftest claude-bridge-test-resume-continues-an-earlier-conversation ()
  (let* ((dir (cbt-project))
         (buf (claude-bridge-chat dir))
         resumed offered)
    (unwind-protect
        (progn
          (cbt-wait-idle buf)
          (cbt-turn buf "remember the word PINEAPPLE")
          (cl-letf (((symbol-function 'completing-read)
                     (lambda (_prompt collection &rest _)
                       (setq offered (all-completions "" collection))
                       (car offered))))
            (setq resumed (claude-bridge-resume nil dir)))
          (should (= (length offered) 1))
          (should (string-match-p "PINEAPPLE" (car offered)))
          (cbt-wait-idle resumed)
          ;; The past conversation is shown again, then it goes on with it in context.
          (should (string-match-p "❯ remember the word PINEAPPLE\n+Echo: remember the word PINEAPPLE"
                                  (cbt-buffer-text resumed)))
          (should-not (buffer-live-p buf))  ; the resumed chat replaced it
          (should (eq (claude-bridge-chat dir) resumed))
          (should (equal (plist-get (cbt-turn resumed "and now?") :text) "Echo: and now?"))
          (should (string-match-p "PINEAPPLE" (json-serialize (plist-get (cbt-last-request)
                                                                         :messages)))))
      (dolist (b (list buf resumed))
        (when (buffer-live-p b) (kill-buffer b))))))

;;;; Failures

(ert-deftest claude-bridge-test-bridge-killed-is-reported-and-the-next-command-works ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (let* ((session (cbt-session buf))
           (bridge (claude-bridge-client-pid))
           (cli (claude-bridge-session-pid session))
           (messages nil))
      (cbt-turn buf "first")
      (cl-letf* ((real-message (symbol-function 'message))
                 ((symbol-function 'message)
                  (lambda (fmt &rest args)
                    (when fmt (push (apply #'format-message fmt args) messages))
                    (apply real-message fmt args))))
        (signal-process bridge 'kill)
        (cbt-wait "the exit report" (lambda () (eq (claude-bridge-session-state session) 'exited))))
      (claude-bridge--flush session)
      (should (string-match-p "claude-bridge exited" (cbt-buffer-text buf)))
      (should (cl-some (lambda (m) (string-match-p "claude-bridge exited" m)) messages))
      (cbt-wait "the old CLI's end" (lambda () (not (cbt-alive-p cli))))
      (should (equal (plist-get (cbt-turn buf "second") :text) "Echo: second"))
      (should-not (equal (claude-bridge-client-pid) bridge))
      ;; The new session resumed the conversation: the model saw the first turn too.
      (should (string-match-p "Echo: first" (json-serialize (plist-get (cbt-last-request)
                                                                       :messages)))))))

(ert-deftest claude-bridge-test-cli-crash-is-reported-and-the-next-prompt-works ()
  ;; The fake CLI exits with code 3 on "EXIT 3", as no real CLI can be made to.
  (let ((claude-bridge-create-params
         (list :claudePath (or (getenv "CLAUDE_BRIDGE_TEST_FAKE_CLI")
                               (ert-fail "CLAUDE_BRIDGE_TEST_FAKE_CLI is not set")))))
    (cbt-with-chat (buf dir)
      (ignore dir)
      (let* ((session (cbt-session buf))
             (pid (claude-bridge-session-pid session)))
        (claude-bridge-send "EXIT 3" session)
        (cbt-wait "the crash report" (lambda () (eq (claude-bridge-session-state session) 'exited)))
        (claude-bridge--flush session)
        (should (string-match-p "Claude exited (failed" (cbt-buffer-text buf)))
        (should (equal (plist-get (cbt-turn buf "still with me?") :text)
                       "Echo: still with me?"))
        (should-not (equal (claude-bridge-session-pid session) pid))))))

(ert-deftest claude-bridge-test-killing-the-chat-buffer-closes-its-session ()
  (let* ((buf (claude-bridge-chat (cbt-project)))
         (session (cbt-session buf)))
    (cbt-wait-idle buf)
    (let ((id (claude-bridge-session-id session))
          (pid (claude-bridge-session-pid session)))
      (kill-buffer buf)
      (cbt-wait "the CLI's end" (lambda () (not (cbt-alive-p pid))))
      (cbt-wait "the bridge's report of the closed session"
                (lambda () (equal (plist-get (claude-bridge-client-call-sync
                                              "session/status" (list :sessionId id))
                                             :state)
                                  "exited"))))))

(provide 'claude-bridge-test)
;;; claude-bridge-test.el ends here
